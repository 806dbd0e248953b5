import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
import { BENCHMARK_COMMAND, benchmarkEnvironment } from "../../components/post-deploy-benchmark";
import { postDeployMain } from "../../scripts/post-deploy-benchmark";
import { startFakeVllm } from "./benchmarks/fake-vllm";

const OUTPUTS = {
  namespace: "gemmaforge",
  deploymentName: "gemma4-12b",
  servedModelName: "fake-model",
  config: { maxModelLen: 8192 },
};

function quietStderr<T>(fn: () => Promise<T>): Promise<{ value: T; stderr: string }> {
  const write = process.stderr.write.bind(process.stderr);
  let stderr = "";
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  return fn()
    .then((value) => ({ value, stderr }))
    .finally(() => {
      process.stderr.write = write;
    });
}

describe("post-deploy benchmark command", () => {
  it("is one constant command line; inputs, the API key and the kubeconfig travel in the environment", () => {
    assert.equal(BENCHMARK_COMMAND, "npx --no-install tsx scripts/post-deploy-benchmark.ts");
    const env = benchmarkEnvironment({
      stack: "seqs1",
      endpoint: "http://127.0.0.1:8100",
      outputsJson: JSON.stringify(OUTPUTS, null, 2),
      scenario: "",
      kubeconfig: "/home/u/.kube/config",
      kubeContext: "k3s",
      apiKeyOnStdin: true,
    });
    assert.deepEqual(env, {
      VLLM_TUNER_STACK: "seqs1",
      VLLM_TUNER_ENDPOINT: "http://127.0.0.1:8100",
      VLLM_TUNER_OUTPUTS: JSON.stringify(OUTPUTS, null, 2),
      KUBECONFIG: "/home/u/.kube/config",
      VLLM_TUNER_KUBE_CONTEXT: "k3s",
      VLLM_TUNER_API_KEY_STDIN: "1",
    });
  });

  it("records an invalid measurement (the result file says so) and exits 0, so the deploy stands", async () => {
    const failing = await startFakeVllm({ forceStatus: 500 });
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "post-deploy-"));
    fs.writeFileSync(path.join(cwd, "scenario.yaml"), "phases: [sequential]\nsequential: {runs: 2}\n");
    const { value: code, stderr } = await quietStderr(() =>
      postDeployMain(
        {
          VLLM_TUNER_STACK: "seqs1",
          VLLM_TUNER_ENDPOINT: failing.url,
          VLLM_TUNER_OUTPUTS: JSON.stringify(OUTPUTS, null, 2),
          VLLM_TUNER_SCENARIO: "scenario.yaml",
          KUBECONFIG: path.join(cwd, "no-such-kubeconfig"),
        },
        cwd,
      ),
    );
    await failing.close();
    assert.equal(code, 0);
    const files = fs.readdirSync(path.join(cwd, "results", "seqs1")).filter((f) => f.endsWith(".json"));
    assert.equal(files.length, 1);
    const result = JSON.parse(fs.readFileSync(path.join(cwd, "results", "seqs1", files[0]!), "utf8")) as {
      valid: boolean;
      stack: string;
    };
    assert.deepEqual({ valid: result.valid, stack: result.stack }, { valid: false, stack: "seqs1" });
    assert.match(
      stderr,
      /post-deploy benchmark: the measurement is NOT valid \(recorded in results\/seqs1\/.+\.json\); the deploy stands/,
    );
  });

  it("reads the API key from stdin, sends it as Bearer and never writes it to the result", async () => {
    const seen: string[] = [];
    const server = await startFakeVllm({});
    server.server.prependListener("request", (req) => seen.push(String(req.headers.authorization)));
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "post-deploy-"));
    fs.writeFileSync(path.join(cwd, "scenario.yaml"), "phases: [sequential]\nsequential: {runs: 1}\n");
    const saved = process.env.VLLM_API_KEY;
    try {
      const { value: code } = await quietStderr(() =>
        postDeployMain(
          {
            VLLM_TUNER_STACK: "seqs1",
            VLLM_TUNER_ENDPOINT: server.url,
            VLLM_TUNER_OUTPUTS: JSON.stringify(OUTPUTS),
            VLLM_TUNER_SCENARIO: "scenario.yaml",
            KUBECONFIG: path.join(cwd, "no-such-kubeconfig"),
            VLLM_TUNER_API_KEY_STDIN: "1",
          },
          cwd,
          undefined,
          async () => "sk-SENTINEL-post-deploy\n",
        ),
      );
      assert.equal(code, 0);
    } finally {
      if (saved === undefined) delete process.env.VLLM_API_KEY;
      else process.env.VLLM_API_KEY = saved;
      await server.close();
    }
    assert.ok(seen.length > 0);
    assert.deepEqual([...new Set(seen)], ["Bearer sk-SENTINEL-post-deploy"]);
    const dir = path.join(cwd, "results", "seqs1");
    for (const f of fs.readdirSync(dir))
      assert.equal(fs.readFileSync(path.join(dir, f), "utf8").includes("SENTINEL"), false);
  });

  it("fails the deploy when no measurement was recorded (unreachable endpoint), with the benchmark's code", async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "post-deploy-"));
    const { value: code } = await quietStderr(() =>
      postDeployMain(
        {
          VLLM_TUNER_STACK: "seqs1",
          VLLM_TUNER_ENDPOINT: "http://127.0.0.1:1",
          VLLM_TUNER_OUTPUTS: JSON.stringify(OUTPUTS),
          // Not the default 2 minutes of waiting for a server that will never answer.
          VLLM_TUNER_WAIT_READY_SECONDS: "0",
        },
        cwd,
      ),
    );
    // 3 = endpoint unreachable: every input parsed (a usage error would be 2).
    assert.equal(code, 3);
  });

  it("hands the benchmark a kubeconfig whose current context is kubernetes:context, then removes it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "post-deploy-"));
    const kubeconfig = path.join(dir, "config");
    fs.writeFileSync(
      kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: 'http://127.0.0.1:1'}}]\n" +
        "users: [{name: a, user: {}}]\ncontexts: [{name: one, context: {cluster: a, user: a}}, {name: two, context: {cluster: a, user: a}}]\n" +
        "current-context: one\n",
    );
    const calls: Array<{ argv: string[]; context: string | undefined }> = [];
    const code = await postDeployMain(
      {
        VLLM_TUNER_STACK: "s",
        VLLM_TUNER_ENDPOINT: "http://e",
        VLLM_TUNER_OUTPUTS: "{}",
        KUBECONFIG: kubeconfig,
        VLLM_TUNER_KUBE_CONTEXT: "two",
      },
      dir,
      async (argv) => {
        const file = argv[argv.indexOf("--kubeconfig") + 1]!;
        const written = parse(fs.readFileSync(file, "utf8")) as { "current-context"?: string };
        calls.push({ argv, context: written["current-context"] });
        return 0;
      },
    );
    assert.equal(code, 0);
    assert.equal(calls.length, 1);
    const { argv, context } = calls[0]!;
    assert.equal(context, "two");
    const temp = argv[argv.indexOf("--kubeconfig") + 1]!;
    assert.deepEqual(argv.slice(0, 11), [
      "run",
      "--stack",
      "s",
      "--endpoint",
      "http://e",
      "--outputs-json",
      "{}",
      "--out",
      "results",
      "--wait-ready",
      "120",
    ]);
    assert.equal(fs.existsSync(temp), false);
  });
});
