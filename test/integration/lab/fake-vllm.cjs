#!/usr/bin/env node
/*
 * A stand-in for "the Python that has vLLM", for tests on machines without a GPU. Run as
 * `fake-vllm.cjs -c "import vllm"` it succeeds; as `fake-vllm.cjs -m vllm.entrypoints.cli.main
 * serve MODEL ... --port N` it behaves as vLLM 0.24 does towards the lab: prints its startup and
 * KV-capacity lines (verbatim from ../shared/vllm-0.24/captures/vllm.log), then serves GET /health
 * and /v1/models on 127.0.0.1:N; or, when the file named by FAKE_VLLM_MODE_FILE says "crash",
 * prints a traceback's last line and exits 1. Every start and exit is appended to
 * FAKE_VLLM_EVENTS (one JSON line each, with its argv and the env names it got), so a test can
 * check what the lab ran and that two never overlapped. As vLLM 0.24 does: `--config FILE` adds the
 * YAML file's flags (`api-key` among them); the key (`--api-key`, else VLLM_API_KEY) is wanted as
 * Bearer on every /v1 path; `non-default args` lists it unless the logging config
 * (VLLM_LOGGING_CONFIG_PATH) puts that logger at WARNING; and under VLLM_CACHE_ROOT it writes
 * cache_key_factors.json with its VLLM_* env, raw (vLLM writes every known VLLM_* var there).
 */
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { parse: parseYaml } = require("yaml");

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
const configFile = flag("--config");
const fromConfig = configFile === undefined ? {} : parseYaml(fs.readFileSync(configFile, "utf8"));
const apiKey = fromConfig["api-key"] ?? flag("--api-key") ?? process.env.VLLM_API_KEY ?? null;
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
  apiKey,
  hfHome: process.env.HF_HOME ?? null,
  cudaVisibleDevices: process.env.CUDA_VISIBLE_DEVICES ?? null,
});
process.on("exit", (code) => event("exit", { code }));

const log = (line) => process.stdout.write(`(APIServer pid=${process.pid}) ${line}\n`);
const loggingConfig = process.env.VLLM_LOGGING_CONFIG_PATH
  ? JSON.parse(fs.readFileSync(process.env.VLLM_LOGGING_CONFIG_PATH, "utf8"))
  : null;
const argsLevel = loggingConfig?.loggers?.["vllm.entrypoints.serve.utils.api_utils"]?.level ?? "INFO";
if (argsLevel === "INFO" || argsLevel === "DEBUG") {
  const keyArg = fromConfig["api-key"] !== undefined || flag("--api-key") !== undefined ? `, 'api_key': ['${apiKey}']` : "";
  log(`INFO 11-30 03:39:44 [api_utils.py:273] non-default args: {'model': '${argv[3]}'${keyArg}}`);
}
if (process.env.VLLM_CACHE_ROOT) {
  const dir = path.join(process.env.VLLM_CACHE_ROOT, "torch_compile_cache", "fakehash00", "rank_0_0", "backbone");
  fs.mkdirSync(dir, { recursive: true });
  const env = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith("VLLM_")).sort().map((k) => [k, process.env[k]]));
  fs.writeFileSync(path.join(dir, "cache_key_factors.json"), JSON.stringify({ env }, null, 2));
}
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
    if (apiKey !== null && req.url.startsWith("/v1") && req.headers.authorization !== `Bearer ${apiKey}`) {
      res.statusCode = 401;
      return res.end(JSON.stringify({ error: "Unauthorized" }));
    }
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
