import { strict as assert } from "node:assert";
import { chatBody } from "../../../measure/http/chat";
import { errorMessageOf } from "../../../measure/http/client";
import { SseParser } from "../../../measure/http/sse";
import { percentile, summarize } from "../../../measure/stats";

describe("statistics", () => {
  it("interpolates percentiles linearly between order statistics, as numpy's default", () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(v, 50), 50.5);
    assert.equal(percentile(v, 99), 99.01);
    assert.equal(percentile(v, 100), 100);
    assert.equal(percentile(v, 0), 1);
    assert.equal(percentile([7], 99), 7);
    const s = summarize([3, 1, 2, 10])!;
    // Ranks 1.5, 2.7, 2.85, 2.97 of 0..3: 2.5, 3 + 0.7 x 7, 3 + 0.85 x 7, 3 + 0.97 x 7.
    assert.deepEqual(
      [s.count, s.mean, s.min, s.p50, s.p90, s.p95, s.p99, s.max].map((x) => Number(x.toFixed(9))),
      [4, 4, 1, 2.5, 7.9, 8.95, 9.79, 10],
    );
  });

  it("does not make p99 of a short window its maximum", () => {
    const s = summarize(Array.from({ length: 20 }, (_, i) => (i === 19 ? 1000 : 100)))!;
    assert.equal(s.max, 1000);
    assert.equal(Number(s.p99.toFixed(9)), 829);
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

  it("reads bytes as latin1 when asked: text stays non-empty JSON, numbers unchanged", () => {
    const p = new SseParser(true);
    const bytes = Buffer.from('data: {"content":"요약","usage":{"completion_tokens":2}}\n\n');
    const out = [...p.push(bytes.subarray(0, 20)), ...p.push(bytes.subarray(20))];
    assert.equal(out.length, 1);
    const parsed = JSON.parse(out[0]!) as { content: string; usage: { completion_tokens: number } };
    assert.deepEqual([parsed.content.length, parsed.usage.completion_tokens], [6, 2]);
  });

  it("keeps a CR split from its LF across chunks", () => {
    const p = new SseParser();
    assert.deepEqual([...p.push("data: a\r"), ...p.push("\n\r\n")], ["a"]);
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
