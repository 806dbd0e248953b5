import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
import { parsePostDeployInput, postDeploy, postDeployCommand } from "../../benchmarks/post-deploy";
import { silentProgress } from "../../benchmarks/progress";
import type { RunOptions } from "../../benchmarks/run";
import { runBenchmark } from "../../benchmarks/run";
import { gitInfo } from "../../common/git-info";
import {
  BENCHMARK_COMMAND,
  benchmarkInput,
  parseMeasured,
  visibleInputs,
} from "../../components/post-deploy-benchmark";
import {
  POST_DEPLOY_MODES,
  type PostDeployInput,
  postDeployEnv,
  postDeployRule,
  waitReadySeconds,
} from "../../config/post-deploy-input";
import { RULE_DEFAULTS, recordedRuleSettings, ruleSettingsEnv } from "../../config/rule";
import { MeasuredOutputSchema } from "../../config/stack-outputs";
import { candidateSummary } from "../../verdict/candidate-summary";
import { ModeSchema } from "../../verdict/mode";
import { startFakeVllm } from "./benchmarks/fake-vllm";

const OUTPUTS = {
  namespace: "gemmaforge",
  deploymentName: "gemma4-12b",
  servedModelName: "fake-model",
  config: { maxModelLen: 8192 },
};

function project(scenario: string): string {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "post-deploy-"));
  fs.writeFileSync(path.join(cwd, "scenario.yaml"), scenario);
  return cwd;
}

function input(over: Partial<PostDeployInput>): PostDeployInput {
  return {
    ...benchmarkInput({ stack: "seqs1", endpoint: "http://127.0.0.1:1", outputs: OUTPUTS, scenario: "scenario.yaml" }),
    waitReadySeconds: 0,
    ...over,
  };
}

const logs: string[] = [];
const progress = { ...silentProgress, log: (s: string) => void logs.push(s) };

describe("post-deploy benchmark: one JSON document in, the candidate summary out", () => {
  beforeEach(() => {
    logs.length = 0;
  });

  it("is one constant command line with no input in it, and a child environment of PATH and HOME only", () => {
    assert.equal(
      BENCHMARK_COMMAND,
      'env -i PATH="$PATH" HOME="$HOME" npx --no-install tsx benchmarks/cli.ts post-deploy',
    );
  });

  it("the stdin document carries every input; its visible part (the trigger) all but the key", () => {
    const doc = benchmarkInput({
      stack: "seqs1",
      endpoint: "http://127.0.0.1:8100",
      outputs: OUTPUTS,
      scenario: "",
      kubeconfig: "/home/u/.kube/config",
      kubeContext: "k3s",
      apiKey: "sk-SENTINEL",
    });
    assert.deepEqual(doc, {
      stack: "seqs1",
      endpoint: "http://127.0.0.1:8100",
      outputs: OUTPUTS,
      scenario: "",
      kubeconfig: "/home/u/.kube/config",
      kubeContext: "k3s",
      waitReadySeconds: 120,
      ...recordedRuleSettings(RULE_DEFAULTS),
      mode: "unknown",
      apiKey: "sk-SENTINEL",
    });
    assert.deepEqual(parsePostDeployInput(JSON.stringify(doc)), doc);
    const { apiKey: _key, ...rest } = doc;
    assert.deepEqual(visibleInputs(doc, true), { ...rest, apiKeyOnStdin: true });
  });

  it("the rollout wait: 120 s, or VLLM_TUNER_WAIT_READY_SECONDS; a bad value is named", () => {
    assert.equal(waitReadySeconds({}), 120);
    assert.equal(waitReadySeconds({ VLLM_TUNER_WAIT_READY_SECONDS: "5" }), 5);
    assert.throws(
      () => waitReadySeconds({ VLLM_TUNER_WAIT_READY_SECONDS: "-1" }),
      /VLLM_TUNER_WAIT_READY_SECONDS = "-1": expected an integer from 0 to 3600 \(seconds\)/,
    );
  });

  it("the rule and mode of the summary: the rule's defaults and unknown, or the environment's; a bad value is named", () => {
    const defaults = { ...RULE_DEFAULTS, mode: "unknown" };
    assert.deepEqual(postDeployRule({}), defaults);
    assert.deepEqual(postDeployRule({ VLLM_TUNER_TARGET_CONCURRENCY: "", VLLM_TUNER_MODE: "" }), defaults);
    assert.deepEqual(postDeployRule({ VLLM_TUNER_TARGET_CONCURRENCY: "2", VLLM_TUNER_MODE: "lab" }), {
      ...RULE_DEFAULTS,
      targetConcurrency: 2,
      mode: "lab",
    });
    assert.throws(
      () => postDeployRule({ VLLM_TUNER_TARGET_CONCURRENCY: "0" }),
      /^RuleError: VLLM_TUNER_TARGET_CONCURRENCY "0" is not allowed; allowed: an integer from 1 to 1024$/,
    );
    assert.throws(
      () => postDeployRule({ VLLM_TUNER_MODE: "gpu" }),
      /^Error: VLLM_TUNER_MODE = "gpu": expected one of lab, cluster, unknown$/,
    );
    // The campaign's environment reads back as its rule and mode; the wait is capped at what the program accepts.
    const env = postDeployEnv({ targetConcurrency: 8, mode: "cluster", waitReadySeconds: 5000 });
    assert.deepEqual(env, {
      ...ruleSettingsEnv({ ...RULE_DEFAULTS, targetConcurrency: 8 }),
      VLLM_TUNER_MODE: "cluster",
      VLLM_TUNER_WAIT_READY_SECONDS: "3600",
    });
    assert.deepEqual(postDeployRule(env), { ...RULE_DEFAULTS, targetConcurrency: 8, mode: "cluster" });
    assert.equal(waitReadySeconds(env), 3600);
    // config/ cannot import the verdict's modes: the two lists are kept equal here.
    assert.deepEqual(POST_DEPLOY_MODES, [...ModeSchema.options, "unknown"]);
    const goodput = postDeployEnv({ targetConcurrency: 4, mode: "lab", objective: "goodput", waitReadySeconds: 60 });
    assert.equal(goodput["VLLM_TUNER_OBJECTIVE"], "goodput");
    assert.deepEqual(postDeployRule(goodput), { ...RULE_DEFAULTS, objective: "goodput", mode: "lab" });
    assert.throws(
      () => postDeployRule({ VLLM_TUNER_OBJECTIVE: "speed" }),
      /^RuleError: VLLM_TUNER_OBJECTIVE "speed" is not allowed; allowed: throughput, goodput$/,
    );
  });

  it("the summary is judged under the document's target and records its mode", async () => {
    const server = await startFakeVllm({});
    const cwd = project(
      "phases: [sequential, load]\nsequential: {runs: 1}\nload: {concurrency: [1, 2], durationSeconds: 1, warmupSeconds: 0, promptRepeats: 8}\n",
    );
    try {
      const { code, summary } = await postDeploy(
        input({
          endpoint: server.url,
          kubeconfig: path.join(cwd, "no-such-kubeconfig"),
          targetConcurrency: 2,
          mode: "lab",
        }),
        cwd,
        { run: runBenchmark, progress },
      );
      assert.equal(code, 0);
      assert.ok(summary);
      assert.deepEqual(
        { rule: summary.rule, mode: summary.mode },
        {
          rule: recordedRuleSettings({ targetConcurrency: 2 }),
          mode: "lab",
        },
      );
      const result = JSON.parse(fs.readFileSync(path.join(cwd, summary.resultFile!), "utf8"));
      assert.deepEqual(summary, candidateSummary(result, { targetConcurrency: 2 }, "lab", summary.resultFile));
      // Judged at 2, a level the scenario ran: no "no load level at concurrency 4".
      assert.deepEqual(
        summary.verdict.disqualified.filter((r) => /no load level/.test(r)),
        [],
      );
      assert.notEqual(summary.verdict.requestsPerSecond, null);
      // Run from a project that is no git checkout (a staged copy), it records the commit of the code that measured.
      const repo = gitInfo(path.resolve(__dirname, "../.."));
      assert.notEqual(repo.gitCommit, null);
      assert.deepEqual(summary.tool, repo);
    } finally {
      await server.close();
    }
  });

  it("refuses a bad document naming the field, without echoing its values", () => {
    const bad = { ...input({ apiKey: "sk-SENTINEL" }), endpoint: "nope" };
    assert.throws(
      () => parsePostDeployInput(JSON.stringify(bad)),
      (e: Error) => /endpoint: an http\(s\) URL/.test(e.message) && !e.message.includes("SENTINEL"),
    );
    assert.throws(
      () => parsePostDeployInput("not json sk-SENTINEL"),
      (e: Error) => !e.message.includes("SENTINEL"),
    );
  });

  it("records an invalid measurement, exits 0 and says so in the summary, from the run itself", async () => {
    const failing = await startFakeVllm({ forceStatus: 500 });
    const cwd = project("phases: [sequential]\nsequential: {runs: 2}\n");
    const { code, summary } = await postDeploy(
      input({ endpoint: failing.url, kubeconfig: path.join(cwd, "no-such-kubeconfig") }),
      cwd,
      { run: runBenchmark, progress },
    );
    await failing.close();
    assert.equal(code, 0);
    assert.ok(summary);
    assert.deepEqual(
      { valid: summary.valid, complete: summary.complete, stack: summary.stack },
      {
        valid: false,
        complete: true,
        stack: "seqs1",
      },
    );
    assert.ok(summary.invalidReasons.length > 0);
    const file = path.join(cwd, summary.resultFile!);
    assert.match(summary.resultFile!, /^results\/seqs1\/.+\.json$/);
    assert.equal((JSON.parse(fs.readFileSync(file, "utf8")) as { valid: boolean }).valid, false);
    assert.match(
      logs.join("\n"),
      /the measurement is NOT valid \(recorded in results\/seqs1\/.+\.json\); the deploy stands/,
    );
    // The summary is the verdict's own, and what the program exports passes the stack-output schema.
    assert.deepEqual(
      summary,
      candidateSummary(
        JSON.parse(fs.readFileSync(file, "utf8")),
        { targetConcurrency: 4 },
        "unknown",
        summary.resultFile,
      ),
    );
    assert.equal(MeasuredOutputSchema.safeParse(summary).success, true);
    assert.deepEqual(parseMeasured(`${JSON.stringify(summary)}\n`), summary);
  });

  it("sends the key from the document as Bearer, never writes it, never puts it in process.env", async () => {
    const seen: string[] = [];
    const server = await startFakeVllm({});
    server.server.prependListener("request", (req) => seen.push(String(req.headers.authorization)));
    const cwd = project("phases: [sequential]\nsequential: {runs: 1}\n");
    let out = "";
    const envBefore = JSON.stringify(process.env);
    try {
      const code = await postDeployCommand(
        cwd,
        (s) => {
          out += s;
        },
        async () =>
          JSON.stringify(
            input({
              endpoint: server.url,
              kubeconfig: path.join(cwd, "no-such-kubeconfig"),
              apiKey: "sk-SENTINEL-post-deploy",
            }),
          ),
      );
      assert.equal(code, 0);
    } finally {
      await server.close();
    }
    assert.equal(JSON.stringify(process.env), envBefore);
    assert.ok(seen.length > 0);
    assert.deepEqual([...new Set(seen)], ["Bearer sk-SENTINEL-post-deploy"]);
    assert.equal(out.trim().split("\n").length, 1);
    assert.equal(out.includes("SENTINEL"), false);
    assert.equal(parseMeasured(out).valid, true);
    const dir = path.join(cwd, "results", "seqs1");
    for (const f of fs.readdirSync(dir))
      assert.equal(fs.readFileSync(path.join(dir, f), "utf8").includes("SENTINEL"), false);
  });

  it("an unreachable endpoint measures nothing and exits 3, naming the endpoint", async () => {
    const cwd = project("phases: [sequential]\n");
    const { code, summary } = await postDeploy(input({}), cwd, { run: runBenchmark, progress });
    assert.deepEqual({ code, summary }, { code: 3, summary: null });
    assert.match(
      logs.join("\n"),
      /post-deploy benchmark: http:\/\/127\.0\.0\.1:1 not usable: .+; nothing was measured/,
    );
    assert.equal(fs.existsSync(path.join(cwd, "results")), false);
  });

  it("hands the benchmark a kubeconfig whose current context is kubeContext, then removes it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "post-deploy-"));
    const kubeconfig = path.join(dir, "config");
    fs.writeFileSync(
      kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: 'http://127.0.0.1:1'}}]\n" +
        "users: [{name: a, user: {}}]\ncontexts: [{name: one, context: {cluster: a, user: a}}, {name: two, context: {cluster: a, user: a}}]\n" +
        "current-context: one\n",
    );
    const seen: Array<{ file: string; context: string | undefined }> = [];
    const run = async (opts: RunOptions) => {
      const written = parse(fs.readFileSync(opts.kubeconfig!, "utf8")) as { "current-context"?: string };
      seen.push({ file: opts.kubeconfig!, context: written["current-context"] });
      throw new Error("stop here");
    };
    await assert.rejects(
      postDeploy(input({ kubeconfig, kubeContext: "two", scenario: "" }), dir, { run, progress }),
      /stop here/,
    );
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.context, "two");
    assert.equal(fs.existsSync(seen[0]!.file), false);
  });
});
