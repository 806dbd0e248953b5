/**
 * Is the load generator ever the bottleneck? Drives loopback servers with our closed loop and with
 * autocannon, the named peer, in the same run, one after the other; prints requests/s, client CPU
 * per request and the ratio, for each server:
 *   - stub: a child process streaming a tiny chat completion at once (the client is all that costs);
 *   - simulator: llm-d-inference-sim with zero latencies (a vLLM-protocol server; found by the one tool
 *     rule, common/tools.ts, and skipped with that rule's reason when it is nowhere).
 *   npm run bench:loadgen -- [--duration-seconds 5] [--connections 32] [--tokens 8] [--server stub|simulator|both] [--json]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { locateTool } from "../../common/tools";
import { chatBody } from "../../measure/http/chat";
import { ApiClient } from "../../measure/http/client";
import { streamChat } from "../../measure/http/stream";
import { runClosedLoop } from "../../measure/load/closed-loop";

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

async function startStub(tokens: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["-e", SERVER_JS, String(tokens)], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  return { url: `http://127.0.0.1:${line.toString().trim()}`, child };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The simulator with no latency, slots for every connection: the client, not the server's sleeps, is measured. */
async function startSimulator(bin: string, connections: number): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    bin,
    [
      "--port",
      String(port),
      "--model",
      "m",
      "--max-num-seqs",
      String(connections * 2),
      "--max-model-len",
      "4096",
      "--time-to-first-token",
      "0ms",
      "--inter-token-latency",
      "0ms",
      "--force-dummy-tokenizer",
    ],
    { stdio: "ignore" },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`simulator exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).ok) return { url, child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("simulator not healthy within 15 s");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface ClientMeasurement {
  readonly name: string;
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** User + system CPU of this process per completed request, microseconds. */
  readonly clientCpuMicrosPerRequest: number;
  /** Its system (kernel: socket calls) part. */
  readonly clientSystemMicrosPerRequest: number;
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
    clientSystemMicrosPerRequest: requests > 0 ? cpu.system / requests : NaN,
  };
}

interface LoadgenOptions {
  readonly durationSeconds: number;
  readonly connections: number;
  readonly tokens: number;
}

/** Ours and autocannon against one server, same request, same connections, one after the other. */
async function compareOn(server: string, url: string, opts: LoadgenOptions) {
  const req = { model: "m", prompt: "hello", maxTokens: opts.tokens, ignoreEos: true };
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
    "vllm-tuner closed loop (keep-alive sockets, SSE parsed, per-chunk timing)",
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
  return {
    server,
    url,
    ours,
    autocannon: peer,
    ratio: ours.requestsPerSecond / peer.requestsPerSecond,
    cpuRatio: ours.clientCpuMicrosPerRequest / peer.clientCpuMicrosPerRequest,
  };
}

type ServerChoice = "stub" | "simulator" | "both";

async function compareLoadgen(opts: LoadgenOptions & { readonly server: ServerChoice }) {
  const runs: Array<Awaited<ReturnType<typeof compareOn>> | { server: string; skipped: string }> = [];
  if (opts.server !== "simulator") {
    const { url, child } = await startStub(opts.tokens);
    try {
      runs.push(await compareOn("stub", url, opts));
    } finally {
      child.kill();
    }
  }
  if (opts.server !== "stub") {
    const bin = locateTool("llm-d-inference-sim");
    if ("error" in bin) runs.push({ server: "simulator", skipped: bin.error });
    else {
      const { url, child } = await startSimulator(bin.path, opts.connections);
      try {
        runs.push(await compareOn("llm-d-inference-sim", url, opts));
      } finally {
        child.kill();
      }
    }
  }
  return { ...opts, runs };
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      "duration-seconds": { type: "string", default: "5" },
      connections: { type: "string", default: "32" },
      tokens: { type: "string", default: "8" },
      server: { type: "string", default: "both" },
      json: { type: "boolean", default: false },
    },
  });
  const server = values.server as ServerChoice;
  if (!["stub", "simulator", "both"].includes(server)) {
    process.stderr.write(`error: --server must be stub, simulator or both, got ${JSON.stringify(values.server)}\n`);
    process.exit(2);
  }
  void compareLoadgen({
    durationSeconds: Number(values["duration-seconds"]),
    connections: Number(values.connections),
    tokens: Number(values.tokens),
    server,
  }).then(
    (r) => {
      if (values.json) process.stdout.write(`${JSON.stringify(r)}\n`);
      else {
        for (const run of r.runs) {
          if ("skipped" in run) {
            process.stdout.write(`${run.server}: n/a (${run.skipped})\n`);
            continue;
          }
          process.stdout.write(`${run.server}:\n`);
          for (const m of [run.ours, run.autocannon]) {
            process.stdout.write(
              `  ${m.name}: ${m.requestsPerSecond.toFixed(0)} req/s, ${m.clientCpuMicrosPerRequest.toFixed(1)} µs client CPU/request (${m.clientSystemMicrosPerRequest.toFixed(1)} system), ${m.errors} errors\n`,
            );
          }
          process.stdout.write(
            `  ratio (ours / autocannon): ${run.ratio.toFixed(3)} req/s, ${run.cpuRatio.toFixed(2)} x CPU/request, at ${r.connections} connections, ${r.tokens} SSE chunks per response, ${r.durationSeconds} s each\n`,
          );
        }
      }
    },
    (err: Error) => {
      process.stderr.write(`error: ${err.message}\n`);
      process.exitCode = 1;
    },
  );
}
