/**
 * The post-deploy benchmark as `pulumi up` runs it (components/post-deploy-benchmark.ts). Its
 * inputs come through the environment, so the command line in the preview stays one short,
 * constant string and the API key never appears in it:
 *   VLLM_TUNER_STACK, VLLM_TUNER_ENDPOINT, VLLM_TUNER_OUTPUTS (stack outputs as JSON),
 *   VLLM_TUNER_SCENARIO (optional), KUBECONFIG and VLLM_TUNER_KUBE_CONTEXT (optional),
 *   VLLM_TUNER_API_KEY_STDIN=1 when the API key comes on stdin (a Pulumi secret input of the command;
 *   it becomes VLLM_API_KEY for the benchmark, which sends it as Bearer and never stores it).
 * A measurement that completes but is not valid is recorded (the result file says so) and exits
 * 0: the deploy itself succeeded, and failing `pulumi up` would mark a healthy server as failed.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { cliMain, EXIT } from "../benchmarks";

export const ENV = {
  stack: "VLLM_TUNER_STACK",
  endpoint: "VLLM_TUNER_ENDPOINT",
  outputs: "VLLM_TUNER_OUTPUTS",
  scenario: "VLLM_TUNER_SCENARIO",
  kubeContext: "VLLM_TUNER_KUBE_CONTEXT",
  apiKeyOnStdin: "VLLM_TUNER_API_KEY_STDIN",
  /** Seconds to wait for the rollout and /health (default WAIT_READY_SECONDS). */
  waitReady: "VLLM_TUNER_WAIT_READY_SECONDS",
} as const;

export const RESULTS_DIR = "results";

type Env = Readonly<Record<string, string | undefined>>;
/** How long the benchmark waits for the rollout and /health after `up` said the Deployment is ready. */
export const WAIT_READY_SECONDS = 120;

type Bench = (argv: string[], cwd: string) => Promise<number>;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The JSON result files under results/<stack>/. */
function resultFiles(cwd: string, stack: string): Set<string> {
  const dir = path.join(cwd, RESULTS_DIR, stack);
  if (!fs.existsSync(dir)) return new Set();
  return new Set(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => path.join(dir, f)),
  );
}

/** A kubeconfig whose current context is `context`, written 0600 to a temp file; the caller removes it. */
function kubeconfigFor(context: string, kubeconfig: string | undefined): string {
  const kc = new k8s.KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  kc.setCurrentContext(context);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-kube-")), "config");
  fs.writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
  return file;
}

export async function postDeployMain(
  env: Env,
  cwd: string,
  bench: Bench = cliMain,
  stdin: () => Promise<string> = readStdin,
): Promise<number> {
  const stack = env[ENV.stack];
  const endpoint = env[ENV.endpoint];
  const outputs = env[ENV.outputs];
  const missing = [
    [ENV.stack, stack],
    [ENV.endpoint, endpoint],
    [ENV.outputs, outputs],
  ].filter(([, v]) => !v);
  if (!stack || !endpoint || !outputs) {
    process.stderr.write(`post-deploy benchmark: ${missing.map(([k]) => k).join(", ")} not set\n`);
    return EXIT.usage;
  }
  // The benchmark reads the key from its process environment (benchmarks/cli.ts).
  if (env[ENV.apiKeyOnStdin] === "1") process.env.VLLM_API_KEY = (await stdin()).trim();
  const context = env[ENV.kubeContext];
  const kubeconfig = context ? kubeconfigFor(context, env.KUBECONFIG) : env.KUBECONFIG;
  const argv = ["run", "--stack", stack, "--endpoint", endpoint, "--outputs-json", outputs, "--out", RESULTS_DIR];
  // `pulumi up` can return before the new pod exists: wait for this generation's rollout (and /health)
  // rather than time the previous pod's readiness.
  argv.push("--wait-ready", env[ENV.waitReady] ?? String(WAIT_READY_SECONDS));
  if (env[ENV.scenario]) argv.push("--scenario", env[ENV.scenario] as string);
  if (kubeconfig) argv.push("--kubeconfig", kubeconfig);

  const before = resultFiles(cwd, stack);
  let code: number;
  try {
    code = await bench(argv, cwd);
  } finally {
    if (context && kubeconfig) fs.rmSync(path.dirname(kubeconfig), { recursive: true, force: true });
  }
  if (code !== EXIT.invalidResults) return code;
  const written = [...resultFiles(cwd, stack)].filter((f) => !before.has(f));
  const invalid = written.find((f) => (JSON.parse(fs.readFileSync(f, "utf8")) as { valid?: unknown }).valid === false);
  if (invalid === undefined) return code;
  process.stderr.write(
    `post-deploy benchmark: the measurement is NOT valid (recorded in ${path.relative(cwd, invalid)}); the deploy stands.` +
      ` Measure again with: npm run bench -- run --stack ${stack} --endpoint ${endpoint}\n`,
  );
  return EXIT.ok;
}

if (require.main === module) {
  void postDeployMain(process.env, process.cwd()).then((code) => {
    process.exitCode = code;
  });
}
