import { strict as assert } from "node:assert";
import * as path from "node:path";
import { parseCliOptions, SEED_STACKS } from "../../../campaign/options";
import { pulumiEnv } from "../../../campaign/pulumi";
import { UsageError } from "../../../common/usage-error";

const REPO = "/repo";

describe("campaign options", () => {
  it("defaults to the seed's ten stacks on the user's cluster, in the repo, with the user's backend", () => {
    const o = parseCliOptions([], REPO);
    assert.deepEqual(o.stacks, [...SEED_STACKS]);
    assert.equal(o.mode, "cluster");
    assert.equal(o.workDir, REPO);
    assert.equal(o.stage, false);
    assert.equal(o.backendUrl, undefined);
    assert.equal(o.resultsDir, "/repo/results");
    assert.equal(o.order, "fixed");
    assert.equal(o.targetConcurrency, 4);
    assert.equal(o.readyTimeoutSeconds, 300);
  });

  it("--lab stages into .lab/project with a file backend and its own results directory", () => {
    const o = parseCliOptions(
      ["--lab", "--short", "--stacks", "baseline, seqs1,seqs4", "--order", "shuffle", "--seed", "7"],
      REPO,
    );
    assert.deepEqual(o.stacks, ["baseline", "seqs1", "seqs4"]);
    assert.equal(o.mode, "lab");
    assert.equal(o.workDir, "/repo/.lab/project");
    assert.equal(o.stage, true);
    assert.equal(o.backendUrl, "file:///repo/.lab/pulumi-state");
    assert.equal(o.resultsDir, "/repo/results/lab");
    assert.equal(o.seed, 7);
    assert.equal(o.short, true);
    assert.equal(o.readyTimeoutSeconds, 120);
  });

  it("resolves paths against the repo and trims the endpoint", () => {
    const o = parseCliOptions(
      [
        "--kubeconfig",
        "k/config",
        "--endpoint",
        "http://node:30080/",
        "--results",
        "out",
        "--work-dir",
        "/tmp/w",
        "--backend",
        "file:///s",
      ],
      REPO,
    );
    assert.equal(o.kubeconfig, path.join(REPO, "k/config"));
    assert.equal(o.endpoint, "http://node:30080");
    assert.equal(o.resultsDir, "/repo/out");
    assert.equal(o.workDir, "/tmp/w");
    assert.equal(o.stage, true);
    assert.equal(o.backendUrl, "file:///s");
  });

  it("rejects bad values with the flag named", () => {
    assert.throws(
      () => parseCliOptions(["--order", "random"], REPO),
      new UsageError("--order must be one of fixed, shuffle, alternate, got random"),
    );
    assert.throws(
      () => parseCliOptions(["--seed", "x"], REPO),
      new UsageError('--seed must be a non-negative integer, got "x"'),
    );
    assert.throws(
      () => parseCliOptions(["--endpoint", "node:8000"], REPO),
      new UsageError("--endpoint must be an http(s) URL, got node:8000"),
    );
    assert.throws(
      () => parseCliOptions(["--backend", "/tmp/state"], REPO),
      new UsageError("--backend must be a URL such as file:///path, got /tmp/state"),
    );
    assert.throws(() => parseCliOptions(["--nope"], REPO), UsageError);
  });
});

describe("campaign Pulumi environment", () => {
  it("lab: file backend, empty passphrase unless the user set one, the lab kubeconfig, this node first on PATH", () => {
    const env = pulumiEnv(
      {
        mode: "lab",
        backendUrl: "file:///repo/.lab/pulumi-state",
        kubeconfig: "/repo/.lab/kubeconfig",
        nodeBinary: "/opt/node/bin/node",
      },
      { PATH: "/usr/bin" },
    );
    assert.deepEqual(env, {
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PATH: "/opt/node/bin:/usr/bin",
      PULUMI_BACKEND_URL: "file:///repo/.lab/pulumi-state",
      KUBECONFIG: "/repo/.lab/kubeconfig",
      PULUMI_CONFIG_PASSPHRASE: "",
    });
    const own = pulumiEnv(
      { mode: "lab", backendUrl: undefined, kubeconfig: undefined, nodeBinary: "/n/node" },
      { PULUMI_CONFIG_PASSPHRASE_FILE: "/secret" },
    );
    assert.equal("PULUMI_CONFIG_PASSPHRASE" in own, false);
  });

  it("cluster: invents neither a backend nor a passphrase", () => {
    const env = pulumiEnv(
      { mode: "cluster", backendUrl: undefined, kubeconfig: undefined, nodeBinary: "/n/node" },
      { PATH: "/usr/bin" },
    );
    assert.deepEqual(env, {
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PATH: "/n:/usr/bin",
    });
  });
});
