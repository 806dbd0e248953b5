/**
 * Is the load generator ever the bottleneck? Drives one loopback server (a child process
 * streaming a tiny chat completion at once) with our closed loop and with autocannon, the
 * named peer, in the same run; prints requests/s, client CPU per request and the ratio.
 *   npm run bench:loadgen -- [--duration-seconds 5] [--connections 32] [--tokens 8] [--json]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { parseArgs } from "node:util";
import { ApiClient } from "../http/client";
import { chatBody, streamChat } from "../http/stream";
import { runClosedLoop } from "../load/closed-loop";

interface AutocannonResult {
  requests: { total: number; average: number };
  non2xx: number;
  errors: number;
  duration: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
// autocannon ships no type declarations; this is the one call we use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require("autocannon") as Autocannon;

/** The server: answers every chat completion with `tokens` SSE chunks, usage and [DONE], no delay. */
const SERVER_JS = `
const http = require("node:http");
const tokens = Number(process.argv[1]);
const chunk = (o) => "data: " + JSON.stringify(o) + "\\n\\n";
const body = Array.from({ length: tokens }, () => chunk({ choices: [{ delta: { content: "tok " } }] })).join("")
  + chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: tokens } }) + "data: [DONE]\\n\\n";
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => { res.writeHead(200, { "content-type": "text/event-stream" }); res.end(body); });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"));
`;

async function startServer(tokens: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["-e", SERVER_JS, String(tokens)], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  return { url: `http://127.0.0.1:${line.toString().trim()}`, child };
}

export interface ClientMeasurement {
  readonly name: string;
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** User + system CPU of this process per completed request, microseconds. */
  readonly clientCpuMicrosPerRequest: number;
}

async function measure(
  name: string,
  seconds: number,
  fn: () => Promise<{ requests: number; errors: number }>,
): Promise<ClientMeasurement> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { requests, errors } = await fn();
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    name,
    requests,
    errors,
    seconds: Math.min(wall, seconds),
    requestsPerSecond: requests / seconds,
    clientCpuMicrosPerRequest: requests > 0 ? (cpu.user + cpu.system) / requests : NaN,
  };
}

export async function compareLoadgen(opts: { durationSeconds: number; connections: number; tokens: number }) {
  const { url, child } = await startServer(opts.tokens);
  try {
    const req = { model: "m", prompt: "hello", maxTokens: opts.tokens, ignoreEos: false };
    const client = new ApiClient({ endpoint: url, connections: opts.connections });
    // A short warm-up of both paths (JIT, sockets) so neither pays it in its window.
    await runClosedLoop({
      concurrency: opts.connections,
      warmupMs: 0,
      durationMs: 500,
      maxRequests: 1e6,
      signal: new AbortController().signal,
      send: (s) => streamChat(client, req, 5000, s),
    });
    await autocannon({
      url: `${url}/v1/chat/completions`,
      method: "POST",
      body: JSON.stringify(chatBody(req, true)),
      headers: { "content-type": "application/json" },
      connections: opts.connections,
      duration: 0.5,
    });

    const ours = await measure(
      "vllm-tuner closed loop (undici, SSE parsed, per-token timing)",
      opts.durationSeconds,
      async () => {
        const r = await runClosedLoop({
          concurrency: opts.connections,
          warmupMs: 0,
          durationMs: opts.durationSeconds * 1000,
          maxRequests: 10_000_000,
          signal: new AbortController().signal,
          send: (s) => streamChat(client, req, 5000, s),
        });
        const inWindow = r.samples.filter((s) => s.window);
        return {
          requests: inWindow.filter((s) => s.outcome === "succeeded").length,
          errors: inWindow.filter((s) => s.outcome === "errored").length,
        };
      },
    );
    await client.destroy();
    const peer = await measure("autocannon 9 (raw HTTP/1.1, no body parsing)", opts.durationSeconds, async () => {
      const r = await autocannon({
        url: `${url}/v1/chat/completions`,
        method: "POST",
        body: JSON.stringify(chatBody(req, true)),
        headers: { "content-type": "application/json" },
        connections: opts.connections,
        duration: opts.durationSeconds,
      });
      return { requests: r.requests.total - r.non2xx, errors: r.errors + r.non2xx };
    });
    return { server: url, ...opts, ours, autocannon: peer, ratio: ours.requestsPerSecond / peer.requestsPerSecond };
  } finally {
    child.kill();
  }
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      "duration-seconds": { type: "string", default: "5" },
      connections: { type: "string", default: "32" },
      tokens: { type: "string", default: "8" },
      json: { type: "boolean", default: false },
    },
  });
  void compareLoadgen({
    durationSeconds: Number(values["duration-seconds"]),
    connections: Number(values.connections),
    tokens: Number(values.tokens),
  }).then(
    (r) => {
      if (values.json) process.stdout.write(`${JSON.stringify(r)}\n`);
      else {
        for (const m of [r.ours, r.autocannon]) {
          process.stdout.write(
            `${m.name}: ${m.requestsPerSecond.toFixed(0)} req/s, ${m.clientCpuMicrosPerRequest.toFixed(1)} µs client CPU/request, ${m.errors} errors\n`,
          );
        }
        process.stdout.write(
          `ratio (ours / autocannon): ${r.ratio.toFixed(3)} at ${r.connections} connections, ${r.tokens} SSE chunks per response, ${r.durationSeconds} s each\n`,
        );
      }
    },
    (err: Error) => {
      process.stderr.write(`error: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
