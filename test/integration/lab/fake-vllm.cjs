#!/usr/bin/env node
/*
 * A stand-in for "the Python that has vLLM", for tests on machines without a GPU. Run as
 * `fake-vllm.cjs -c "import vllm"` it succeeds; as `fake-vllm.cjs -m vllm.entrypoints.cli.main
 * serve MODEL ... --port N` it behaves as vLLM 0.24 does towards the lab: prints its startup and
 * KV-capacity lines (verbatim from ../shared/vllm-0.24/captures/vllm.log), then serves GET /health
 * and /v1/models on 127.0.0.1:N; or, when the file named by FAKE_VLLM_MODE_FILE says "crash",
 * prints a traceback's last line and exits 1. Every start and exit is appended to
 * FAKE_VLLM_EVENTS (one JSON line each, with its argv and the env names it got), so a test can
 * check what the lab ran and that two never overlapped.
 */
const fs = require("node:fs");
const http = require("node:http");

const argv = process.argv.slice(2);
if (argv[0] === "-c") process.exit(argv[1] === "import vllm" ? 0 : 2);
if (argv[0] !== "-m" || argv[1] !== "vllm.entrypoints.cli.main" || argv[2] !== "serve") {
  process.stderr.write(`fake-vllm: unexpected invocation ${JSON.stringify(argv)}\n`);
  process.exit(2);
}
const flag = (name) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};
const port = Number(flag("--port"));
const host = flag("--host");
const served = flag("--served-model-name") ?? argv[3];
const maxModelLen = Number(flag("--max-model-len") ?? 8192);
const mode = process.env.FAKE_VLLM_MODE_FILE ? fs.readFileSync(process.env.FAKE_VLLM_MODE_FILE, "utf8").trim() : "serve";
const event = (what, extra = {}) => {
  if (!process.env.FAKE_VLLM_EVENTS) return;
  fs.appendFileSync(process.env.FAKE_VLLM_EVENTS, `${JSON.stringify({ what, pid: process.pid, at: Date.now(), ...extra })}\n`);
};
event("start", {
  argv,
  env: Object.keys(process.env).filter((k) => /^(VLLM_|HF_|TRANSFORMERS_|PYTHONUNBUFFERED)/.test(k)).sort(),
  apiKey: process.env.VLLM_API_KEY ?? null,
  hfHome: process.env.HF_HOME ?? null,
  cudaVisibleDevices: process.env.CUDA_VISIBLE_DEVICES ?? null,
});
process.on("exit", (code) => event("exit", { code }));

const log = (line) => process.stdout.write(`(APIServer pid=${process.pid}) ${line}\n`);
log(`INFO 11-30 03:39:44 [api_utils.py:273] non-default args: {'model': '${argv[3]}'}`);
if (mode === "crash") {
  process.stderr.write("ValueError: fake-vllm was told to crash\n");
  process.exit(1);
}
setTimeout(() => {
  process.stdout.write(
    [
      `(EngineCore pid=${process.pid}) INFO 11-30 03:40:23 [gpu_worker.py:508] Available KV cache memory: 109.11 GiB`,
      `(EngineCore pid=${process.pid}) INFO 11-30 03:40:23 [kv_cache_utils.py:2146] GPU KV cache size: 3,575,184 tokens`,
      `(EngineCore pid=${process.pid}) INFO 11-30 03:40:23 [kv_cache_utils.py:2147] Maximum concurrency for 8,192 tokens per request: 436.42x`,
      "",
    ].join("\n"),
  );
  const server = http.createServer((req, res) => {
    if (req.url === "/health") return res.end();
    if (req.url === "/v1/models") {
      res.setHeader("content-type", "application/json");
      return res.end(JSON.stringify({ object: "list", data: [{ id: served, object: "model", root: argv[3], max_model_len: maxModelLen }] }));
    }
    res.statusCode = 404;
    res.end();
  });
  server.listen(port, host, () => log(`INFO 11-30 03:40:33 [api_server.py:581] Starting vLLM server on http://${host}:${port}`));
  process.on("SIGTERM", () => {
    log("INFO:     Shutting down");
    // vLLM takes a moment to release the GPU; the lab must wait for it.
    setTimeout(() => process.exit(0), 500);
  });
}, 1000);
