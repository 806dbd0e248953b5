import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A tiny vLLM-protocol server for unit tests: one token per whitespace-separated word. */
export interface FakeVllmOptions {
  readonly model?: string;
  readonly maxModelLen?: number;
  /** Delay before the first token and between tokens, ms. */
  readonly ttftMs?: number;
  readonly itlMs?: number;
  /** Completions generated at once; more wait in a FIFO queue (their TTFT includes the wait). Default: no limit. */
  readonly maxRunning?: number;
  /** Status forced on every completion (e.g. 500), or undefined. */
  readonly forceStatus?: number;
}

export interface FakeVllm {
  readonly url: string;
  readonly server: Server;
  /** Completions currently being generated. */
  running(): number;
  /** Every chat prompt received, in order. */
  prompts(): string[];
  close(): Promise<void>;
}

export const countWords = (s: string): number => s.split(/\s+/).filter((w) => w.length > 0).length;

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * vLLM's prefix cache in miniature, words as tokens: full 16-token blocks keyed by a hash chain from the
 * start of the prompt; a request reuses blocks until the first one not seen before.
 */
class PrefixCache {
  private readonly blocks = new Set<string>();
  promptTokens = 0;
  cachedTokens = 0;

  admit(prompt: string): void {
    const words = prompt.split(/\s+/).filter((w) => w.length > 0);
    this.promptTokens += words.length;
    let hash = "";
    let chain = true;
    for (let i = 0; i + 16 <= words.length; i += 16) {
      hash = createHash("sha256")
        .update(hash + words.slice(i, i + 16).join(" "))
        .digest("hex");
      if (chain && this.blocks.has(hash)) this.cachedTokens += 16;
      else chain = false;
      this.blocks.add(hash);
    }
  }
}

function promptOf(body: Record<string, unknown>): string {
  const messages = body["messages"] as Array<{ content: string }> | undefined;
  return messages ? messages.map((m) => m.content).join(" ") : String(body["prompt"] ?? "");
}

export async function startFakeVllm(opts: FakeVllmOptions = {}): Promise<FakeVllm> {
  const model = opts.model ?? "fake-model";
  const maxModelLen = opts.maxModelLen ?? 1024;
  let running = 0;
  const queue: Array<() => void> = [];
  const admit = async () => {
    if (opts.maxRunning !== undefined && running >= opts.maxRunning)
      await new Promise<void>((resolve) => queue.push(resolve));
    running += 1;
  };
  const leave = () => {
    running -= 1;
    queue.shift()?.();
  };
  const seen: string[] = [];
  const cache = new PrefixCache();
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    void (async () => {
      const body = req.method === "POST" ? await readBody(req) : {};
      switch (req.url) {
        case "/health":
          return json(res, 200, {});
        case "/v1/models":
          return json(res, 200, {
            object: "list",
            data: [{ id: model, root: "fake/root", max_model_len: maxModelLen }],
          });
        case "/tokenize":
          return json(res, 200, { count: countWords(promptOf(body)), max_model_len: maxModelLen, tokens: [] });
        case "/metrics":
          res.writeHead(200, { "content-type": "text/plain" });
          return res.end(
            `vllm:num_requests_running{model_name="${model}"} ${running}\nvllm:num_requests_waiting{model_name="${model}"} ${queue.length}\n` +
              `vllm:prompt_tokens_total{model_name="${model}"} ${cache.promptTokens}\n` +
              `vllm:prompt_tokens_cached_total{model_name="${model}"} ${cache.cachedTokens}\n`,
          );
        case "/v1/chat/completions": {
          if (opts.forceStatus) return json(res, opts.forceStatus, { error: { message: "forced failure" } });
          const prompt = countWords(promptOf(body));
          const maxTokens = Number(body["max_tokens"] ?? 16);
          if (prompt + maxTokens > maxModelLen) {
            return json(res, 400, {
              error: {
                message: `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${prompt + maxTokens} tokens.`,
              },
            });
          }
          seen.push(promptOf(body));
          cache.admit(promptOf(body));
          await admit();
          try {
            await sleep(opts.ttftMs ?? 0);
            if (!body["stream"]) {
              await sleep((opts.itlMs ?? 0) * (maxTokens - 1));
              return json(res, 200, {
                choices: [{ message: { content: "x ".repeat(maxTokens) } }],
                usage: { prompt_tokens: prompt, completion_tokens: maxTokens },
              });
            }
            res.writeHead(200, { "content-type": "text/event-stream" });
            for (let i = 0; i < maxTokens; i++) {
              if (i > 0) await sleep(opts.itlMs ?? 0);
              if (res.destroyed) return;
              res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: "x " } }] })}\n\n`);
            }
            res.write(
              `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: maxTokens } })}\n\n`,
            );
            res.end("data: [DONE]\n\n");
          } finally {
            leave();
          }
          return;
        }
        default:
          return json(res, 404, { error: { message: "not found" } });
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    running: () => running,
    prompts: () => [...seen],
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
