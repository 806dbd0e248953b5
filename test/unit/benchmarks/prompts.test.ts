import { strict as assert } from "node:assert";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { equalCostSymbols, PromptSource, tagOf, widthFor } from "../../../benchmarks/phases/prompts";
import { type PhaseContext, Tokenizer } from "../../../benchmarks/phases/shared";
import { silentProgress } from "../../../benchmarks/progress";
import { ApiClient } from "../../../measure/http/client";
import { buildScenario } from "../../../measure/inputs/scenario";

/** A /tokenize that counts one token per character, `costly` characters twice. */
async function charTokenizer(costly: string) {
  const server = createServer((req, res) => {
    void (async () => {
      let text = "";
      for await (const c of req) text += String(c);
      const body = JSON.parse(text) as { messages: Array<{ content: string }> };
      const prompt = body.messages[0]!.content;
      const count = [...prompt].reduce((n, ch) => n + (costly.includes(ch) ? 2 : 1), 0);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ count, max_model_len: 9999 }));
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const client = new ApiClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  const ctx: PhaseContext = {
    client,
    model: "m",
    scenario: buildScenario([]),
    signal: new AbortController().signal,
    progress: silentProgress,
  };
  return {
    tokenizer: new Tokenizer(ctx),
    close: async () => {
      await client.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("unique prompt tags", () => {
  it("writes the counter least significant symbol first, so consecutive tags differ in their first symbol", () => {
    assert.equal(tagOf(0, ["0", "1"], 4), "[req 0 0 0 0] ");
    assert.equal(tagOf(6, ["0", "1"], 4), "[req 0 1 1 0] ");
    assert.equal(tagOf(1234, "0123456789".split(""), 10), "[req 4 3 2 1 0 0 0 0 0 0] ");
    assert.deepEqual([widthFor(10), widthFor(9), widthFor(2)], [10, 11, 34]);
  });

  it("keeps the largest group of symbols of equal token cost", () => {
    const counts = new Map([
      ["0", 20],
      ["1", 21],
      ["2", 20],
      ["3", 21],
      ["4", 20],
    ]);
    assert.deepEqual(equalCostSymbols(counts), { symbols: ["0", "2", "4"], tokens: 20 });
  });

  it("leaves out symbols the server's tokenizer charges more for; every prompt is new and costs the same", async () => {
    const t = await charTokenizer("79");
    try {
      const body = "Kubernetes GPU serving reliability test. ";
      const source = await PromptSource.create(t.tokenizer, body, true);
      const width = widthFor(8);
      assert.deepEqual(source.info, {
        uniquePrefix: true,
        promptTokens: `[req ] `.length + 2 * width - 1 + body.length,
        note: `a ${width}-symbol tag of [01234568] before every prompt; /tokenize gives every tag the same token count`,
      });
      const prompts = Array.from({ length: 200 }, () => source.next());
      assert.equal(new Set(prompts).size, 200);
      for (const p of prompts) {
        assert.ok(p.startsWith("[req ") && p.endsWith(`] ${body}`), p);
        assert.equal(/[79]/.test(p.slice(0, p.indexOf("]"))), false, p);
        assert.equal(await t.tokenizer.count(p), source.info.promptTokens);
      }
      // Consecutive prompts differ within the tag's first symbol: no shared 16-token block.
      assert.notEqual(prompts[0]!.slice(0, 6), prompts[1]!.slice(0, 6));
    } finally {
      await t.close();
    }
  });

  it("sends the seed's one prompt when the scenario turns the tag off", async () => {
    const t = await charTokenizer("");
    try {
      const source = await PromptSource.create(t.tokenizer, "same prompt", false);
      assert.deepEqual([source.next(), source.next()], ["same prompt", "same prompt"]);
      assert.deepEqual(source.info, {
        uniquePrefix: false,
        promptTokens: 11,
        note: "one identical prompt (prompts.uniquePrefix: false): vLLM's prefix cache may serve most of it",
      });
      assert.equal(buildScenario([]).prompts.uniquePrefix, true);
      assert.equal(buildScenario([{ prompts: { uniquePrefix: false } }]).prompts.uniquePrefix, false);
      assert.throws(() => buildScenario([{ prompts: { unique: false } }]), /prompts/);
    } finally {
      await t.close();
    }
  });
});
