import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { apiErrorMessage, apiUrl, kubeChange, kubeClient } from "../../../components/kube/client";
import { kubeTarget, loadKubeConfig, mergeKubeConfigs } from "../../../components/kube/kubeconfig";

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("the program's kubeconfig reader", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "kubeconfig-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("reads a k3s-style config: CA, client certificate and key as data", () => {
    const kc = mergeKubeConfigs([
      {
        dir,
        text:
          `clusters: [{name: default, cluster: {server: "https://127.0.0.1:6443/", certificate-authority-data: ${b64("CA")}}}]\n` +
          `users: [{name: default, user: {client-certificate-data: ${b64("CERT")}, client-key-data: ${b64("KEY")}}}]\n` +
          "contexts: [{name: default, context: {cluster: default, user: default}}]\ncurrent-context: default\n",
      },
    ]);
    assert.deepEqual(kubeTarget(kc, undefined), {
      context: "default",
      server: "https://127.0.0.1:6443",
      ca: "CA",
      insecure: false,
      tlsServerName: undefined,
      cert: "CERT",
      key: "KEY",
      authorization: undefined,
    });
  });

  it("reads files relative to the kubeconfig's directory, and a token file", () => {
    fs.writeFileSync(path.join(dir, "ca.crt"), "CA-FILE");
    fs.writeFileSync(path.join(dir, "token"), "secret-token\n");
    const file = path.join(dir, "config");
    fs.writeFileSync(
      file,
      "clusters: [{name: c, cluster: {server: 'https://k:6443', certificate-authority: ca.crt}}]\n" +
        "users: [{name: u, user: {tokenFile: token}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n",
    );
    const t = kubeTarget(loadKubeConfig(file), "x");
    assert.equal(t.ca, "CA-FILE");
    assert.equal(t.authorization, "Bearer secret-token");
  });

  it("merges KUBECONFIG's files: the first definition of a name and the first current-context win", () => {
    const kc = mergeKubeConfigs([
      { dir, text: "contexts: [{name: a, context: {cluster: one}}]\ncurrent-context: a\n" },
      {
        dir,
        text: "contexts: [{name: a, context: {cluster: two}}]\ncurrent-context: b\nclusters: [{name: one, cluster: {server: 'http://s'}}]\n",
      },
    ]);
    assert.equal(kc.currentContext, "a");
    assert.equal(kubeTarget(kc, undefined).server, "http://s");
  });

  const withUser = (user: string) =>
    mergeKubeConfigs([
      {
        dir,
        text: `clusters: [{name: c, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {${user}}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n`,
      },
    ]);

  it("refuses auth providers by name", () => {
    assert.throws(
      () => kubeTarget(withUser("auth-provider: {name: oidc}"), "x"),
      /user u of context x authenticates with auth-provider/,
    );
  });

  it("runs an exec plugin as client-go does: relative to the kubeconfig, its env, not interactive", () => {
    // The plugin echoes what it was given back in the token, so the test sees the argv, env and exec info.
    fs.writeFileSync(
      path.join(dir, "plugin.js"),
      "#!/usr/bin/env node\nconst info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);\n" +
        "const token = [process.argv.slice(2).join(' '), process.env.REGION, info.kind, info.spec.interactive].join('|');\n" +
        "console.log(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token } }));\n",
      { mode: 0o755 },
    );
    const t = kubeTarget(
      withUser(
        "exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: ./plugin.js, args: [get-token, --cluster, c], env: [{name: REGION, value: eu-1}]}",
      ),
      "x",
    );
    assert.equal(t.authorization, "Bearer get-token --cluster c|eu-1|ExecCredential|false");
  });

  it("says which plugin failed and why: absent (with its install hint), or its own last stderr line", () => {
    fs.writeFileSync(path.join(dir, "fails.sh"), "#!/bin/sh\necho 'token expired, run aws sso login' >&2\nexit 1\n", {
      mode: 0o755,
    });
    assert.throws(
      () =>
        kubeTarget(withUser("exec: {command: no-such-plugin-here, installHint: 'install it from example.org'}"), "x"),
      {
        message:
          "user u of context x: its exec plugin no-such-plugin-here failed: no-such-plugin-here is not on PATH (install it from example.org)",
      },
    );
    assert.throws(() => kubeTarget(withUser("exec: {command: ./fails.sh}"), "x"), {
      message: "user u of context x: its exec plugin ./fails.sh failed: token expired, run aws sso login",
    });
  });
});

describe("the program's API client", () => {
  let server: http.Server;
  let seen: http.IncomingHttpHeaders & { url?: string };
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      seen = { ...req.headers, url: req.url };
      if (req.url?.startsWith("/missing")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Status", message: 'deployments.apps "x" not found' }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ items: [{ metadata: { name: "d" } }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix`;
  });
  after(() => server.close());

  it("GETs the path under the server's base path with the query and the credentials", async () => {
    const get = kubeClient({ context: "x", server: base, insecure: false, authorization: "Bearer t" }, 5000);
    const list = await get<{ items: { metadata: { name: string } }[] }>("/apis/apps/v1/deployments", {
      labelSelector: "a=b,c=d",
      timeoutSeconds: 20,
      skipped: undefined,
    });
    assert.deepEqual(list.items, [{ metadata: { name: "d" } }]);
    assert.equal(seen.url, "/prefix/apis/apps/v1/deployments?labelSelector=a%3Db%2Cc%3Dd&timeoutSeconds=20");
    assert.equal(seen.authorization, "Bearer t");
  });

  it("throws with the Status message on an error answer", async () => {
    const get = kubeClient({ context: "x", server: base.replace("/prefix", ""), insecure: false }, 5000);
    await assert.rejects(get("/missing"), { message: 'GET /missing: HTTP 404: deployments.apps "x" not found' });
  });

  it("shortens a body that is not a Status to its first line", () => {
    assert.equal(apiErrorMessage(502, "Bad Gateway\n<html>"), "HTTP 502: Bad Gateway");
    assert.equal(apiUrl("https://h:1/", "/api/v1/pods", { a: 1 }).href, "https://h:1/api/v1/pods?a=1");
  });

  it("a watch ends the wait at the first change, or when the signal fires", async () => {
    const watches: string[] = [];
    let send: (() => void) | undefined;
    const watchServer = http.createServer((req, res) => {
      watches.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      res.write("");
      send = () => res.end(`${JSON.stringify({ type: "MODIFIED", object: {} })}\n`);
    });
    await new Promise<void>((resolve) => watchServer.listen(0, "127.0.0.1", resolve));
    try {
      const server = `http://127.0.0.1:${(watchServer.address() as AddressInfo).port}`;
      const change = kubeChange({ context: "x", server, insecure: false });
      const query = { labelSelector: "app=v", resourceVersion: "42" };
      let ended = false;
      const first = change("/api/v1/namespaces/n/pods", query, 600_000, new AbortController().signal).then(() => {
        ended = true;
      });
      while (send === undefined) await new Promise((r) => setTimeout(r, 5));
      assert.equal(ended, false);
      send();
      await first;
      assert.equal(
        watches[0],
        "/api/v1/namespaces/n/pods?labelSelector=app%3Dv&resourceVersion=42&watch=1&allowWatchBookmarks=false&timeoutSeconds=600",
      );
      const stop = new AbortController();
      const second = change("/api/v1/namespaces/n/pods", query, 600_000, stop.signal);
      stop.abort();
      await second;
    } finally {
      watchServer.closeAllConnections();
      watchServer.close();
    }
  });
});
