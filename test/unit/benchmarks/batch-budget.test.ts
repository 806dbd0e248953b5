import * as assert from "node:assert/strict";
import { H200_CARD, knobOnServer, vllmDefaultOf } from "../../../config";
import { measured, missing } from "../../../measure/measured";
import { batchBudget, cardFromNodeLabels, parseBatchBudgetLog } from "../../../measure/metrics/batch-budget";

const RTX_4090 = measured({ name: "NVIDIA-GeForce-RTX-4090", memoryGib: 24564 / 1024 });
const A100_80 = measured({ name: "NVIDIA-A100-SXM4-80GB", memoryGib: 81920 / 1024 });
const LINE =
  "(APIServer pid=920) INFO 11-30 03:39:44 [scheduler.py:252] Chunked prefill is enabled with max_num_batched_tokens=8192.";

describe("the batch budget the server runs with (measure/metrics/batch-budget.ts)", () => {
  it("reads vLLM's start-up line, the last one when the engine restarted", () => {
    assert.deepEqual(parseBatchBudgetLog(`x\n${LINE}\n${LINE.replace("8192", "2048")}\n`), {
      tokens: 2048,
      line: LINE.replace("8192", "2048"),
    });
    assert.equal(parseBatchBudgetLog("no such line"), null);
    assert.deepEqual(batchBudget(measured(LINE), 0, RTX_4090), measured({ tokens: 8192, source: "log", detail: LINE }));
  });

  it("without the line: the stack's flag, else vLLM 0.24's rule for the card (8192 on ≥ 70 GiB but an A100, else 2048)", () => {
    const noLog = missing("pod log unavailable");
    assert.deepEqual(
      batchBudget(noLog, 4096, missing("unread")),
      measured({
        tokens: 4096,
        source: "flag",
        detail: "--max-num-batched-tokens 4096, as the stack sets it",
      }),
    );
    assert.deepEqual(
      [RTX_4090, A100_80, measured(H200_CARD)].map((card) => batchBudget(noLog, 0, card).value?.tokens),
      [2048, 2048, 8192],
    );
    assert.deepEqual(batchBudget(measured("started"), "0", RTX_4090).value, {
      tokens: 2048,
      source: "card rule",
      detail:
        "vLLM 0.24's default on NVIDIA-GeForce-RTX-4090 (23.98828125 GiB): 8192 on a card of ≥ 70 GiB that is not an A100, else 2048",
    });
  });

  it("is null with every reason when neither the log, the flag nor the card tells", () => {
    assert.deepEqual(
      batchBudget(missing("no cluster access: --no-cluster"), 0, missing("no cluster access: --no-cluster")),
      missing(
        "no cluster access: --no-cluster; vLLM's default (8192 on a card of ≥ 70 GiB that is not an A100, else 2048) on a card not known (no cluster access: --no-cluster)",
      ),
    );
    assert.deepEqual(
      batchBudget(missing("no log"), undefined, RTX_4090),
      missing("no log; outputs.config.maxNumBatchedTokens is absent"),
    );
  });

  it("takes the card from the node's NVIDIA feature labels", () => {
    assert.deepEqual(
      cardFromNodeLabels({ "nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090", "nvidia.com/gpu.memory": "24564" }),
      RTX_4090,
    );
    assert.deepEqual(
      cardFromNodeLabels({ "nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090" }),
      missing(
        "the node's labels do not give the card (nvidia.com/gpu.product NVIDIA-GeForce-RTX-4090, nvidia.com/gpu.memory absent)",
      ),
    );
  });
});

describe("the knob table's vLLM defaults (config/vllm-knobs.ts knobOnServer)", () => {
  it("resolves a knob left at vLLM's default once: constant, by card, or the model's", () => {
    assert.deepEqual(knobOnServer("enablePrefixCaching", true, null), {
      value: true,
      from: "vllm-default",
      why: "vLLM's default true",
    });
    assert.deepEqual(knobOnServer("enablePrefixCaching", false, null).from, "flag");
    assert.deepEqual(knobOnServer("maxNumBatchedTokens", 0, H200_CARD).value, 8192);
    assert.deepEqual(vllmDefaultOf("maxNumSeqs", { name: "emulated 24 GiB card", memoryGib: 24 }).value, 256);
    assert.deepEqual(vllmDefaultOf("maxNumSeqs", H200_CARD).value, 1024);
    assert.deepEqual(vllmDefaultOf("gpuMemoryUtilization", null).value, 0.9);
    assert.deepEqual(vllmDefaultOf("maxModelLen", H200_CARD), {
      value: null,
      from: null,
      why: "vLLM's default is the model's own context length, not known here",
    });
  });
});
