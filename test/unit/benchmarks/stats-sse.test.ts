import { strict as assert } from "node:assert";
import { errorMessageOf } from "../../../benchmarks/http/client";
import { chatBody, SseParser } from "../../../benchmarks/http/stream";
import { percentile, summarize } from "../../../benchmarks/stats";

describe("statistics", () => {
  it("uses nearest-rank percentiles", () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(v, 50), 50);
    assert.equal(percentile(v, 99), 99);
    assert.equal(percentile([7], 99), 7);
    assert.deepEqual(summarize([3, 1, 2, 10]), {
      count: 4,
      mean: 4,
      min: 1,
      p50: 2,
      p90: 10,
      p95: 10,
      p99: 10,
      max: 10,
    });
  });

  it("summarises nothing as null, not zeros", () => {
    assert.equal(summarize([]), null);
  });
});

describe("server-sent events", () => {
  it("reassembles events split anywhere, with CRLF, and multi-line data", () => {
    const p = new SseParser();
    const stream = 'data: {"a":1}\n\ndata: {"b":\r\n\r\n: comment\n\ndata: x\ndata: y\n\ndata: [DONE]\n\n';
    const out: string[] = [];
    for (let i = 0; i < stream.length; i += 3) out.push(...p.push(Buffer.from(stream.slice(i, i + 3))));
    assert.deepEqual(out, ['{"a":1}', '{"b":', "x\ny", "[DONE]"]);
  });

  it("decodes UTF-8 split across chunks", () => {
    const p = new SseParser();
    const bytes = Buffer.from("data: 요약\n\n");
    assert.deepEqual([...p.push(bytes.subarray(0, 8)), ...p.push(bytes.subarray(8))], ["요약"]);
  });

  it("builds the seed's request body, streaming with usage", () => {
    assert.deepEqual(chatBody({ model: "m", prompt: "p", maxTokens: 128, ignoreEos: false }, false), {
      model: "m",
      messages: [{ role: "user", content: "p" }],
      max_tokens: 128,
      temperature: 0,
    });
    const s = chatBody({ model: "m", prompt: "p", maxTokens: 8, ignoreEos: true }, true);
    assert.equal(s["ignore_eos"], true);
    assert.deepEqual(s["stream_options"], { include_usage: true, continuous_usage_stats: false });
  });

  it("extracts OpenAI-style error messages", () => {
    assert.equal(errorMessageOf('{"error":{"message":"too long","type":"BadRequestError"}}'), "too long");
    assert.equal(errorMessageOf('{"object":"error","message":"vLLM v0 style"}'), "vLLM v0 style");
    assert.equal(errorMessageOf("plain"), "plain");
  });
});
