import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/** A Deployment the fake API lists: namespace and name are all the program's checks read. */
export interface ListedServer {
  readonly namespace: string;
  readonly name: string;
}

/** A node the fake API lists, with the `nvidia.com/gpu` it advertises as allocatable. */
export interface ListedNode {
  readonly name: string;
  readonly gpus: number;
}

export interface FakeKubeApi {
  /** A kubeconfig file (context `fake`) pointing at the server. */
  readonly kubeconfig: string;
  /** Every request's method and URL, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that answers the reads the program makes before registering anything
 * (Deployments of this project in every namespace; with `nodes`, the nodes, which it reads for
 * replicas > 1), so the program's cluster checks run for real against a socket. Anything else
 * gets 404, which a test would see as a failure.
 */
export async function fakeKubeApi(
  servers: readonly ListedServer[],
  nodes?: readonly ListedNode[],
): Promise<FakeKubeApi> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/apis/apps/v1/deployments") {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          apiVersion: "apps/v1",
          kind: "DeploymentList",
          metadata: {},
          items: servers.map((s) => ({ metadata: { namespace: s.namespace, name: s.name } })),
        }),
      );
      return;
    }
    if (req.method === "GET" && url.pathname === "/api/v1/nodes" && nodes !== undefined) {
      res.setHeader("content-type", "application/json");
      const items = nodes.map((n) => ({
        metadata: { name: n.name },
        status: { allocatable: { "nvidia.com/gpu": String(n.gpus) } },
      }));
      res.end(JSON.stringify({ apiVersion: "v1", kind: "NodeList", metadata: {}, items }));
      return;
    }
    res.statusCode = 404;
    res.end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fake-kube-")), "config");
  fs.writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{name: fake, cluster: {server: 'http://127.0.0.1:" + port + "', insecure-skip-tls-verify: true}}]",
      "users: [{name: fake, user: {token: fake}}]",
      "contexts: [{name: fake, context: {cluster: fake, user: fake}}, {name: other, context: {cluster: fake, user: fake}}]",
      "current-context: fake",
      "",
    ].join("\n"),
  );
  return {
    kubeconfig,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
