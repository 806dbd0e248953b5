import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseCliOptions } from "../../../campaign/options";
import { pulumiEnv } from "../../../campaign/pulumi";
import { UsageError } from "../../../common/usage-error";
import { PROJECT_DIR } from "../helpers/program";

const REPO = "/repo";

/** A project of empty-but-for-config stack files: `files` maps each stack to its config lines. */
function project(files: Record<string, string[]>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stacks-"));
  for (const [stack, lines] of Object.entries(files))
    fs.writeFileSync(
      path.join(dir, `Pulumi.${stack}.yaml`),
      lines.length === 0 ? "config: {}\n" : `config:\n${lines.map((l) => `  ${l}\n`).join("")}`,
    );
  return dir;
}

describe("campaign options", () => {
  it("defaults to the project's stack files (the seed's ten) on the user's cluster, in the repo, with the user's backend", () => {
    const o = parseCliOptions([], PROJECT_DIR);
    // Derived from the stack files: baseline, then by the knob each sets (memory, context, scheduler, cache), values ascending.
    assert.deepEqual(o.stacks, [
      "baseline",
      "mem070",
      "mem075",
      "mem085",
      "ctx4096",
      "ctx16384",
      "seqs1",
      "seqs2",
      "seqs4",
      "cold",
    ]);
    assert.equal(o.mode, "cluster");
    assert.equal(o.workDir, PROJECT_DIR);
    assert.equal(o.stage, false);
    assert.equal(o.backendUrl, undefined);
    assert.equal(o.resultsDir, path.join(PROJECT_DIR, "results"));
    assert.equal(o.order, "fixed");
    assert.equal(o.targetConcurrency, 4);
    assert.equal(o.readyTimeoutSeconds, 300);
  });

  it("a new stack file joins the default list in its knob's place; a parallel slot's leftover copy does not", () => {
    const dir = project({
      cold: ["vllm-tuner:cacheMode: cold", "vllm-tuner:cacheRunId: r1"],
      "seqs8.s1": ["vllm-tuner:maxNumSeqs: 8"],
      seqs10: ["vllm-tuner:maxNumSeqs: 10"],
      seqs2: ["vllm-tuner:maxNumSeqs: 2"],
      mbt4096: ["vllm-tuner:maxNumBatchedTokens: 4096"],
      mem090: ['vllm-tuner:gpuMemoryUtilization: "0.90"'],
      ctx16384: ["vllm-tuner:maxModelLen: 16384"],
      ctx4096: ["vllm-tuner:maxModelLen: 4096"],
      zeta: ["vllm-tuner:compileCache: false"],
      baseline: [],
    });
    try {
      assert.deepEqual(parseCliOptions([], dir).stacks, [
        "baseline",
        "mem090",
        "ctx4096",
        "ctx16384",
        "seqs2",
        "seqs10",
        "mbt4096",
        "cold",
        "zeta",
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
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
        "--stacks",
        "baseline",
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
