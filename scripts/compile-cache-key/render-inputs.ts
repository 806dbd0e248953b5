/**
 * The vLLM container of a stack with an `apiKey`, as the program renders it, once per key given:
 * its args, its env (plain values; a Secret reference is shown as such) and the files of the
 * API-key Secret mounted at their container paths. factors.py computes vLLM's compile-cache key
 * factors from it.
 *   tsx scripts/compile-cache-key/render-inputs.ts --stack baseline KEY_A KEY_B > inputs.json
 */
import { parseArgs } from "node:util";
import { render } from "../../components";
import { stackConfigOrExit } from "../stack-config";

const { values, positionals } = parseArgs({
  options: { stack: { type: "string", default: "baseline" } },
  allowPositionals: true,
});
const stack = values.stack!;
const config = stackConfigOrExit(stack);
if (positionals.length < 2) {
  process.stderr.write("give at least two API keys\n");
  process.exit(2);
}

const secrets = { hfToken: false, apiKey: true };
const container = render.vllmContainer(config, secrets);
const mount = (container.volumeMounts as { name: string; mountPath: string }[]).find((m) => m.name === "vllm-config");
if (mount === undefined) throw new Error("the container mounts no API-key Secret");
const env = Object.fromEntries(
  (container.env as { name: string; value?: string }[]).map((e) => [e.name, e.value ?? "(from a Secret)"]),
);
const cases = positionals.map((apiKey) => ({
  apiKey,
  args: container.args as string[],
  env,
  files: Object.fromEntries(
    Object.entries(render.apiKeySecretFiles(apiKey)).map(([file, text]) => [`${mount.mountPath}/${file}`, text]),
  ),
}));
process.stdout.write(`${JSON.stringify({ stack, compileCache: config.compileCache, cases }, null, 2)}\n`);
