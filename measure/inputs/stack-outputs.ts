import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { type StackOutputs, StackOutputsSchema } from "../../config";
import { formatIssues } from "./scenario";

/** The shape is shared with the program that exports it: config/stack-outputs.ts. */
export { type StackOutputs, StackOutputsSchema };

/** Keys whose values must never reach a result file, whatever the stack exports. */
// "token" but not "tokens": maxNumBatchedTokens and max_tokens are counts, not credentials.
const SECRET_KEY = /(secret|password|api_?key|credential|token(?!s))/i;

/** Drops secret-looking keys (recursively) and Pulumi's `[secret]` placeholders. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SECRET_KEY.test(k)) continue;
      out[k] = redactSecrets(v);
    }
    return out;
  }
  return value;
}

export function parseStackOutputs(raw: unknown, source: string): StackOutputs {
  const parsed = StackOutputsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `stack outputs from ${source} are not usable:\n${formatIssues(parsed.error)}\n` +
        "Expected at least { namespace, deploymentName, servedModelName, config } (see `pulumi stack output --json`).",
    );
  }
  // A previous post-deploy run's summary is no input of this run: not recorded in its result.
  const { measured: _previous, ...outputs } = parsed.data;
  return outputs;
}

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${source} is not valid JSON: ${(err as Error).message}`);
  }
}

interface OutputsSource {
  readonly outputsFile?: string;
  readonly outputsJson?: string;
  readonly stack?: string;
  /** Directory `pulumi` runs in (the repo). */
  readonly cwd: string;
}

/** Loads outputs from exactly one of: a file, a JSON string, or `pulumi stack output`. */
export async function loadStackOutputs(src: OutputsSource): Promise<StackOutputs> {
  const given = [src.outputsFile, src.outputsJson].filter((v) => v !== undefined).length;
  if (given > 1) throw new Error("pass only one of --outputs FILE and --outputs-json JSON");
  if (src.outputsFile !== undefined) {
    return parseStackOutputs(parseJson(readFileSync(src.outputsFile, "utf8"), src.outputsFile), src.outputsFile);
  }
  if (src.outputsJson !== undefined)
    return parseStackOutputs(parseJson(src.outputsJson, "--outputs-json"), "--outputs-json");
  if (src.stack === undefined) {
    throw new Error("no stack outputs: pass --stack NAME, --outputs FILE or --outputs-json JSON");
  }
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)("pulumi", ["stack", "output", "--json", "--stack", src.stack], {
      cwd: src.cwd,
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (err) {
    throw new Error(
      `\`pulumi stack output --json --stack ${src.stack}\` failed in ${src.cwd}: ${(err as Error).message.trim()}\n` +
        "Run `pulumi stack ls` to check the name, or pass --outputs-json instead.",
    );
  }
  return parseStackOutputs(parseJson(stdout, "pulumi stack output"), `stack ${src.stack}`);
}

/** `--endpoint` wins; otherwise the NodePort on loopback, as the seed reached vLLM on :8100. */
export function resolveEndpoint(outputs: StackOutputs, endpoint: string | undefined): string {
  if (endpoint !== undefined) {
    const url = new URL(endpoint);
    return url.origin + url.pathname.replace(/\/+$/, "");
  }
  if (outputs.nodePort !== undefined && outputs.nodePort !== null) return `http://127.0.0.1:${outputs.nodePort}`;
  throw new Error(
    "the stack exports no nodePort, so the endpoint is unknown: pass --endpoint URL, e.g. after " +
      `\`kubectl -n ${outputs.namespace} port-forward svc/${outputs.serviceName ?? outputs.deploymentName} 8100:${outputs.servicePort ?? 8000}\` ` +
      "use --endpoint http://127.0.0.1:8100",
  );
}

/** The candidate's `--max-num-seqs`, as its exported config says; null when a hand-written outputs file leaves it out. */
export const maxNumSeqsOf = (outputs: StackOutputs): number | null => outputs.config.maxNumSeqs ?? null;
