import * as http from "node:http";
import type { Admission } from "./kv-scheduler";
import type { LatencyHistograms } from "./latency-metrics";
import type { EngineRun, StepEngine } from "./step-engine";

/**
 * Pure: whether one server-sent event of an OpenAI-style stream carries a generated token (a
 * non-empty `delta.content` of a chat chunk or `text` of a completion chunk). The role-only first
 * chunk, the finish and usage chunks and `[DONE]` carry none.
 */
export function carriesToken(event: string): boolean {
  const data = event
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .join("");
  if (data === "" || data === "[DONE]") return false;
  try {
    const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: unknown }; text?: unknown }> };
    const choice = chunk.choices?.[0];
    const text = choice?.delta?.content ?? choice?.text;
    return typeof text === "string" && text !== "";
  } catch {
    return false;
  }
}

/**
 * Pure: how many of `events` (in order, `tokens[i]` saying whether event i carries a token) may be
 * out once `sampled` tokens are sampled: every token event up to the sampled count, the events
 * without a token between them (the role chunk goes with the first token), and, once the whole
 * answer is in (`complete`) and its last token sampled, the trailing ones (finish, usage, [DONE]).
 */
export function releasable(tokens: readonly boolean[], sampled: number, complete: boolean): number {
  if (sampled < 1) return 0;
  let released = 0;
  let seen = 0;
  for (const token of tokens) {
    if (token) {
      if (seen === sampled) return released;
      seen += 1;
    }
    released += 1;
  }
  // The trailing events wait for the answer's end: more tokens may still come after them.
  if (!complete) while (released > 0 && !tokens[released - 1]) released -= 1;
  return released;
}

/**
 * Paces one simulator answer by the engine: a stream's events go out as `run` samples their tokens;
 * a whole (non-streamed) answer goes out when its last token is sampled; an error answer at once.
 * `finish` is called once the last byte is out (or at once for an error).
 */
export function timedAnswer(
  answer: http.IncomingMessage,
  res: http.ServerResponse,
  run: EngineRun,
  finish: () => void,
): void {
  const status = answer.statusCode ?? 502;
  if (status !== 200) {
    finish();
    res.writeHead(status, answer.headers);
    answer.pipe(res);
    return;
  }
  const streaming = String(answer.headers["content-type"] ?? "").includes("text/event-stream");
  const events: string[] = [];
  const tokens: boolean[] = [];
  let pending = "";
  /** Tokens of the answer: a stream's token events, a whole answer's usage. */
  let outputTokens = 0;
  let sent = 0;
  let complete = false;
  let done = false;
  if (streaming) res.writeHead(status, answer.headers);
  const flush = () => {
    if (done || res.destroyed) return;
    if (!streaming) {
      if (!complete || run.sampled() < outputTokens) return;
      res.writeHead(status, answer.headers);
      res.end(events.join(""));
    } else {
      const upTo = releasable(tokens, run.sampled(), complete);
      if (upTo > sent) res.write(events.slice(sent, upTo).join(""));
      sent = upTo;
      if (!(complete && sent === events.length)) return;
      res.end();
    }
    done = true;
    finish();
  };
  answer.setEncoding("utf8");
  answer.on("data", (text: string) => {
    if (!streaming) {
      events.push(text);
      return;
    }
    pending += text;
    let cut = pending.indexOf("\n\n");
    while (cut !== -1) {
      const event = pending.slice(0, cut + 2);
      pending = pending.slice(cut + 2);
      events.push(event);
      tokens.push(carriesToken(event));
      cut = pending.indexOf("\n\n");
    }
  });
  answer.once("end", () => {
    if (pending !== "") {
      events.push(pending);
      tokens.push(false);
    }
    outputTokens = Math.max(1, streaming ? tokens.filter(Boolean).length : completionTokens(events.join("")));
    complete = true;
    run.setOutputTokens(outputTokens);
    flush();
  });
  run.onSample(flush);
}

/** `usage.completion_tokens` of a whole answer, 1 when it says none. */
function completionTokens(body: string): number {
  try {
    const n = (JSON.parse(body) as { usage?: { completion_tokens?: unknown } }).usage?.completion_tokens;
    return typeof n === "number" && n >= 1 ? n : 1;
  } catch {
    return 1;
  }
}

/** An admitted request the KV proxy hands to the engine: its slot, its prompt, when it arrived. */
export interface PacedRequest {
  readonly admission: Admission;
  readonly promptTokens: number;
  readonly arrivedMs: number;
  /** When it was admitted (vLLM's "scheduled"), before its handover. */
  readonly scheduledMs: number;
}

/**
 * An admitted request with the engine timing: the simulator answers at once; the answer goes to
 * the client as the engine samples its tokens. It leaves the engine and gives its slot back when
 * its last token is out, or at once when its client leaves (vLLM aborts it; the simulator's answer
 * is read to its end regardless). Its TTFT, gaps between tokens, end, prefill and decode time go into `latency`.
 */
export function forwardPaced(
  upstream: { readonly port: number; readonly agent: http.Agent },
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Buffer,
  clientLeft: Promise<unknown>,
  request: PacedRequest,
  engine: StepEngine,
  latency: LatencyHistograms,
): void {
  const run = engine.join(request.promptTokens);
  const finish = () => {
    run.leave();
    request.admission.release();
  };
  clientLeft.then(finish);
  let firstTokenMs: number | null = null;
  let lastTokenMs = 0;
  run.onSample((sampled) => {
    const now = performance.now();
    if (sampled === 1) {
      firstTokenMs = now;
      latency.observe("vllm:time_to_first_token_seconds", (now - request.arrivedMs) / 1000);
    } else latency.observe("vllm:inter_token_latency_seconds", (now - lastTokenMs) / 1000);
    lastTokenMs = now;
  });
  const complete = () => {
    latency.observe("vllm:e2e_request_latency_seconds", (performance.now() - request.arrivedMs) / 1000);
    // As vLLM, as the request ends: scheduled to first token (its handover and prefill), and first token to last.
    if (firstTokenMs !== null) {
      latency.observe("vllm:request_prefill_time_seconds", (firstTokenMs - request.scheduledMs) / 1000);
      latency.observe("vllm:request_decode_time_seconds", (lastTokenMs - firstTokenMs) / 1000);
    }
    finish();
  };
  const forwarded = http.request(
    {
      host: "127.0.0.1",
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent: upstream.agent,
    },
    (answer) => timedAnswer(answer, res, run, complete),
  );
  forwarded.once("error", (error) => {
    finish();
    if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `lab kv proxy: simulator: ${error.message}`, code: 502 } }));
  });
  forwarded.end(body);
}
