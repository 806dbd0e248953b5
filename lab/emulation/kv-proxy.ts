import * as http from "node:http";
import type * as net from "node:net";
import { rewriteMetrics } from "./kv-metrics";
import type { KvPool } from "./kv-model";
import { type Admission, KvScheduler } from "./kv-scheduler";
import { LatencyHistograms } from "./latency-metrics";
import { type EngineTiming, StepEngine } from "./step-engine";
import { forwardPaced } from "./timed-answer";

/** What the lab's KV layer needs to know about its pod. */
export interface KvProxyConfig {
  readonly pool: KvPool;
  readonly maxNumSeqs: number;
  /** The served model name, as the simulator labels its series. */
  readonly modelName: string;
  /**
   * The engine timing (lab/emulation/step-engine.ts): the proxy paces the simulator's answer by the fitted
   * model of vLLM's steps. Absent: the simulator's own fixed latencies pass through.
   */
  readonly timing?: EngineTiming;
}

/** Where the proxy listens: a port, on loopback unless `host` says otherwise (the engine image's container port: every interface). */
export type ProxyListen = { readonly port: number; readonly host?: string };

export const LOOPBACK_HOST = "127.0.0.1";

const GENERATE = new Set(["/v1/chat/completions", "/v1/completions"]);

/**
 * The lab's admission proxy in front of one llm-d-inference-sim on loopback: the part of vLLM's
 * scheduler the simulator lacks (a KV pool that makes requests wait; see lab/emulation/kv-scheduler.ts). A
 * generation request is counted by the simulator's own /tokenize (the count the benchmark reads),
 * reserves prompt + max_tokens, and is forwarded once admitted; it releases when the simulator
 * has sent its last byte. A client that leaves while waiting leaves the queue; one that leaves
 * while running has the rest of its answer read and dropped (the simulator cannot abort, and a
 * failed write of it corrupts other requests: lab/emulation/splice.ts), so it holds its slot until then.
 * /metrics gets the pool's and the scheduler's families (lab/emulation/kv-metrics.ts); all else passes through.
 */
export class KvProxy {
  readonly scheduler: KvScheduler;
  private readonly engine: StepEngine | null;
  /** With the engine timing: vLLM's latency histograms of the paced answers. */
  private readonly latency: LatencyHistograms | null;
  private readonly server: http.Server;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  /** Submissions happen in arrival order even though token counts come back in any order. */
  private lastSubmit: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly upstreamPort: number,
    private readonly config: KvProxyConfig,
    private readonly warn: (message: string) => void = (m) => process.stderr.write(`kv-proxy: ${m}\n`),
  ) {
    this.scheduler = new KvScheduler(config.maxNumSeqs, config.pool.kvCacheSizeTokens);
    this.engine = config.timing ? new StepEngine(config.timing) : null;
    this.latency = config.timing ? new LatencyHistograms() : null;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((error: Error) => {
        this.warn(`${req.method} ${req.url}: ${error.message}`);
        if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `lab kv proxy: ${error.message}`, code: 502 } }));
      });
    });
    this.server.keepAliveTimeout = 60_000;
  }

  /** Listens and resolves with the port (the given one, or the one picked for 0). */
  listen(where: ProxyListen): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(where.port, where.host ?? LOOPBACK_HOST, () =>
        resolve((this.server.address() as net.AddressInfo).port),
      );
    });
  }

  close(): void {
    this.server.close();
    this.server.closeAllConnections();
    this.agent.destroy();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // Watched before the first wait: a close during /tokenize or the submit chain has fired by the
    // time the request would queue, and a listener added then never runs.
    const client = watchClient(res);
    const arrivedMs = performance.now();
    const body = await readAll(req);
    const path = (req.url ?? "/").split("?")[0]!;
    if (req.method === "GET" && path === "/metrics") {
      const sim = await this.send("GET", "/metrics", undefined, req.headers);
      const text = rewriteMetrics(
        sim.body.toString("utf8"),
        this.config.modelName,
        this.config.pool,
        this.scheduler.counts(),
        this.latency,
      );
      res.writeHead(sim.status, { "content-type": sim.headers["content-type"] ?? "text/plain; version=0.0.4" });
      res.end(text);
      return;
    }
    if (req.method !== "POST" || !GENERATE.has(path)) {
      this.forward(req, res, body, client);
      return;
    }
    const tokens = this.tokensOf(path, body);
    const prev = this.lastSubmit;
    const submitted = (async () => {
      const counted = await tokens;
      await prev;
      // A client gone before its turn to queue never queues: a waiting count nobody waits behind.
      if (client.gone()) return "left";
      if (counted === null) return undefined;
      return { admission: this.scheduler.submit(counted.total), prompt: counted.prompt, queuedMs: performance.now() };
    })();
    this.lastSubmit = submitted.catch(() => undefined);
    const queued = await submitted;
    if (queued === "left") return;
    if (queued) {
      // A client that leaves while waiting leaves the queue; the wait ends either way.
      if ((await Promise.race([queued.admission.admitted, client.left])) === "left" || client.gone()) {
        queued.admission.release();
        return;
      }
      if (this.engine && this.latency) {
        // Scheduled: vLLM's queue time ends and its prefill time begins (the handover is inside the latter).
        const scheduledMs = performance.now();
        this.latency.observe("vllm:request_queue_time_seconds", (scheduledMs - queued.queuedMs) / 1000);
        // Admitted, it holds its slot through its handover (twin/step-model.ts) before its first step.
        if ((await Promise.race([this.engine.handover(queued.prompt), client.left])) === "left" || client.gone()) {
          queued.admission.release();
          return;
        }
        const timed = { admission: queued.admission, promptTokens: queued.prompt, arrivedMs, scheduledMs };
        const upstream = { port: this.upstreamPort, agent: this.agent };
        forwardPaced(upstream, req, res, body, client.left, timed, this.engine, this.latency);
        return;
      }
    }
    this.forward(req, res, body, client, queued?.admission);
  }

  /**
   * Tokens the request reserves (prompt + max_tokens, max_tokens defaulting to what the context
   * leaves, as vLLM's does), or null when it goes straight through: not JSON, or over the context
   * limit (the simulator answers vLLM's 400 at once; vLLM refuses it before scheduling too).
   */
  private async tokensOf(path: string, body: Buffer): Promise<{ prompt: number; total: number } | null> {
    let request: Record<string, unknown>;
    try {
      request = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
    } catch {
      return null;
    }
    const maxModelLen = this.config.pool.maxModelLen;
    const prompt = await this.promptTokens(path, request);
    const asked = request["max_completion_tokens"] ?? request["max_tokens"];
    const maxTokens = typeof asked === "number" ? asked : maxModelLen - prompt;
    const total = prompt + maxTokens;
    if (!(Number.isInteger(total) && total >= 1 && total <= maxModelLen && total <= this.config.pool.kvCacheSizeTokens))
      return null;
    return { prompt, total };
  }

  /** The prompt's tokens by the simulator's /tokenize; a failed count reserves the whole context, saying so. */
  private async promptTokens(path: string, request: Record<string, unknown>): Promise<number> {
    const query =
      path === "/v1/chat/completions"
        ? { model: request["model"], messages: request["messages"] }
        : { model: request["model"], prompt: request["prompt"] };
    try {
      const answer = await this.send("POST", "/tokenize", Buffer.from(JSON.stringify(query)), {
        "content-type": "application/json",
      });
      const count = (JSON.parse(answer.body.toString("utf8")) as { count?: unknown }).count;
      if (answer.status === 200 && typeof count === "number") return count;
      this.warn(`/tokenize answered HTTP ${answer.status}: the request reserves max_model_len`);
    } catch (error) {
      this.warn(`/tokenize failed (${(error as Error).message}): the request reserves max_model_len`);
    }
    return this.config.pool.maxModelLen;
  }

  private forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Buffer,
    client: ClientWatch,
    admission?: Admission,
  ): void {
    const upstream = http.request(
      {
        host: "127.0.0.1",
        port: this.upstreamPort,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: this.agent,
      },
      (answer) => {
        answer.once("end", () => admission?.release());
        answer.once("close", () => admission?.release());
        // A client that left: read the rest and drop it (see the class comment). Piped into a
        // closed response, the answer would stop at its first full buffer and never end, holding
        // its slot for good: the client may have left before the simulator's first byte, and an
        // answer complete but still buffered ends only once read.
        const drop = () => {
          answer.unpipe(res);
          answer.resume();
        };
        if (client.gone()) {
          drop();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        client.left.then(drop);
      },
    );
    upstream.once("error", (error) => {
      admission?.release();
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `lab kv proxy: simulator: ${error.message}`, code: 502 } }));
    });
    upstream.end(body);
  }

  private send(
    method: string,
    path: string,
    body: Buffer | undefined,
    headers: http.OutgoingHttpHeaders,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const r = http.request(
        { host: "127.0.0.1", port: this.upstreamPort, method, path, headers, agent: this.agent },
        (answer) => {
          readAll(answer).then(
            (b) => resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: b }),
            reject,
          );
        },
      );
      r.setTimeout(30_000, () => r.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
      r.once("error", reject);
      r.end(body);
    });
  }
}

/** Whether the client has left: its connection closed before its answer was sent in full. */
interface ClientWatch {
  readonly gone: () => boolean;
  /** Resolves when it leaves; never when the answer ends first. */
  readonly left: Promise<"left">;
}

function watchClient(res: http.ServerResponse): ClientWatch {
  let gone = false;
  const left = new Promise<"left">((resolve) =>
    res.once("close", () => {
      if (res.writableFinished) return;
      gone = true;
      resolve("left");
    }),
  );
  return { gone: () => gone || res.destroyed, left };
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.once("end", () => resolve(Buffer.concat(chunks)));
    stream.once("error", reject);
  });
}
