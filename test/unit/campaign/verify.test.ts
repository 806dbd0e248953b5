import { strict as assert } from "node:assert";
import { diffArgs, type ObservedState, renderVerification, verifyBaseline } from "../../../campaign/verify";
import { renderVllmArgs } from "../../../components/render/vllm-args";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { PROJECT_DIR } from "../helpers/program";

function argsOf(stack: string): string[] {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return renderVllmArgs(parsed.config, { apiKey: false });
}

const BASELINE_ARGS = argsOf("baseline");
const expected = {
  servedModelName: "gemma-4-12b-q4",
  maxModelLen: 8192,
  args: BASELINE_ARGS,
  image: "vllm/vllm-openai:v0.24.0",
  replicas: 1,
};
const healthy: ObservedState = {
  health: { status: 200, error: null },
  models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }], error: null },
  deployment: { args: BASELINE_ARGS, image: "vllm/vllm-openai:v0.24.0", replicas: 1, readyReplicas: 1, error: null },
};

describe("campaign baseline verification", () => {
  it("passes when health, model id, max_model_len, live args and image all match", () => {
    const v = verifyBaseline(healthy, expected);
    assert.equal(v.ok, true);
    assert.deepEqual(
      v.checks.map((c) => [c.name, c.ok, c.detail]),
      [
        ["/health", true, "HTTP 200"],
        ["/v1/models id", true, "gemma-4-12b-q4"],
        ["/v1/models max_model_len", true, "8192"],
        ["Deployment args", true, "identical to baseline's rendered args"],
        ["Deployment image", true, "vllm/vllm-openai:v0.24.0"],
        ["Deployment replicas", true, "1"],
        ["Ready pods", true, "1 of 1"],
      ],
    );
  });

  it("fails on a candidate's args left live, naming the flag", () => {
    const v = verifyBaseline({ ...healthy, deployment: { ...healthy.deployment, args: argsOf("seqs1") } }, expected);
    assert.equal(v.ok, false);
    assert.deepEqual(
      v.checks.filter((c) => !c.ok).map((c) => c.detail),
      ["--max-num-seqs: live 1, expected 4"],
    );
  });

  it("fails on the wrong context length and an unreachable endpoint", () => {
    const v = verifyBaseline(
      {
        health: { status: null, error: "connect ECONNREFUSED 127.0.0.1:8100" },
        models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 4096 }], error: null },
        deployment: {
          args: null,
          image: null,
          replicas: null,
          readyReplicas: null,
          error: 'HTTP 404: deployments.apps "gemma4-12b" not found',
        },
      },
      expected,
    );
    assert.equal(
      renderVerification(v),
      [
        "  FAIL /health: unreachable: connect ECONNREFUSED 127.0.0.1:8100",
        "  ok   /v1/models id: gemma-4-12b-q4",
        "  FAIL /v1/models max_model_len: expected 8192, got 4096",
        '  FAIL Deployment args: could not read the live Deployment: HTTP 404: deployments.apps "gemma4-12b" not found',
      ].join("\n"),
    );
  });

  it("fails when the served model id is wrong", () => {
    const v = verifyBaseline(
      { ...healthy, models: { models: [{ id: "other", maxModelLen: 8192 }], error: null } },
      expected,
    );
    assert.deepEqual(
      v.checks.filter((c) => !c.ok).map((c) => c.detail),
      ['expected gemma-4-12b-q4, got ["other"]', "no served model to read it from"],
    );
  });

  it("a restored baseline with replicas 2 passes only with 2 pods asked for and 2 Ready", () => {
    const two = { ...expected, replicas: 2 };
    const live = (replicas: number | null, readyReplicas: number) =>
      verifyBaseline({ ...healthy, deployment: { ...healthy.deployment, replicas, readyReplicas } }, two);
    assert.deepEqual(
      live(2, 2)
        .checks.slice(-2)
        .map((c) => [c.name, c.ok, c.detail]),
      [
        ["Deployment replicas", true, "2"],
        ["Ready pods", true, "2 of 2"],
      ],
    );
    assert.equal(live(2, 2).ok, true);
    // One pod still starting (or Pending for a GPU): not restored yet.
    assert.deepEqual(
      live(2, 1)
        .checks.filter((c) => !c.ok)
        .map((c) => [c.name, c.detail]),
      [["Ready pods", "1 Ready, expected 2"]],
    );
  });

  it("fails on drift of the live replicas (a kubectl scale), naming both counts", () => {
    const v = verifyBaseline(
      { ...healthy, deployment: { ...healthy.deployment, replicas: 3, readyReplicas: 3 } },
      { ...expected, replicas: 2 },
    );
    assert.equal(v.ok, false);
    assert.deepEqual(
      v.checks.filter((c) => !c.ok).map((c) => [c.name, c.detail]),
      [
        ["Deployment replicas", "live 3, expected 2"],
        ["Ready pods", "3 Ready, expected 2"],
      ],
    );
    const unset = verifyBaseline({ ...healthy, deployment: { ...healthy.deployment, replicas: null } }, expected);
    assert.deepEqual(
      unset.checks.filter((c) => !c.ok).map((c) => c.detail),
      ["live unset, expected 1"],
    );
  });

  it("diffArgs lists changed, missing, extra and reordered flags", () => {
    assert.deepEqual(diffArgs(["m", "--a", "1"], ["m", "--a", "1"]), []);
    assert.deepEqual(diffArgs(["m", "--a", "2", "--extra"], ["m", "--a", "1", "--b", "x"]), [
      "--a: live 2, expected 1",
      "--b: missing live, expected x",
      "--extra: live (bare flag), not in baseline",
    ]);
    assert.deepEqual(diffArgs(["n", "--a", "1"], ["m", "--a", "1"]), ['model: live ["n"], expected ["m"]']);
    assert.deepEqual(diffArgs(["m", "--b", "2", "--a", "1"], ["m", "--a", "1", "--b", "2"]), [
      'order differs: live ["m","--b","2","--a","1"], expected ["m","--a","1","--b","2"]',
    ]);
  });
});
