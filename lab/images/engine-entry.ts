/**
 * The lab's engine image's entrypoint (bundled into one .js by lab/images/build.ts): takes
 * `vllm serve`'s argv, waits out the lab's simulated model load (cold or warm by the model cache
 * on the claim), then serves llm-d-inference-sim behind the lab's KV layer and timing model
 * (lab/emulation/sim-serve.ts) on the container's port. Its first line says it is the lab's simulator.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { engineLine, exitOnError, KvStartupError, serveSimulator } from "../emulation";
import { freeLoopbackPort } from "../process-engine";
import {
  containerPortOf,
  ENGINE_BANNER,
  type EnginePlan,
  engineOptions,
  enginePlan,
  IMAGE_SIM_BINARY,
  modelCacheMarker,
} from "./engine-plan";

async function main(): Promise<void> {
  engineLine(ENGINE_BANNER);
  const podArgs = process.argv.slice(2);
  // PID 1 in a container gets no default signal handling: a stop during the load must end it.
  const stopDuringLoad = () => process.exit(143);
  process.on("SIGTERM", stopDuringLoad);
  process.on("SIGINT", stopDuringLoad);
  const options = engineOptions(process.env);
  // The OS may hand out the container port itself: the simulator needs another.
  let simPort = await freeLoopbackPort();
  while (simPort === containerPortOf(podArgs)) simPort = await freeLoopbackPort();
  let plan: EnginePlan;
  try {
    plan = enginePlan(podArgs, options, simPort);
  } catch (error) {
    if (!(error instanceof KvStartupError)) throw error;
    // vLLM's engine core refuses a KV cache too small for one request, and the container exits 1; the
    // refusal is the log's last line, on the same stream as the banner before it (engine-log.ts).
    exitOnError(error.message);
  }
  engineLine(
    `lab simulator: args ${JSON.stringify(plan.simArgs)}; vLLM flags the simulator does not model: ${JSON.stringify(plan.ignored)}`,
  );
  const marker = modelCacheMarker(podArgs[0] ?? "", process.env);
  const cold = marker !== null && !fs.existsSync(marker);
  const loadSeconds = cold ? options.coldStartSeconds : options.warmStartSeconds;
  engineLine(`lab simulator: simulated model load, ${cold ? "cold" : "warm"}: ${loadSeconds} s`);
  await new Promise((resolve) => setTimeout(resolve, loadSeconds * 1000));
  if (marker !== null) markModelCached(marker, podArgs[0] ?? "");
  process.off("SIGTERM", stopDuringLoad);
  process.off("SIGINT", stopDuringLoad);
  // llm-d-inference-sim exits 0 on a flag it refuses; vLLM exits 1, so the kubelet keeps the log's
  // last lines as the termination message (FallbackToLogsOnError) as it would for vLLM.
  serveSimulator(plan.serve, IMAGE_SIM_BINARY, plan.simArgs);
}

/** What vLLM's download leaves on the claim, reduced to a marker; a claim it cannot write stays cold, saying so. */
function markModelCached(marker: string, model: string): void {
  try {
    fs.mkdirSync(path.dirname(marker), { recursive: true });
    const tmp = `${marker}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ model, writtenBy: "vllm-tuner lab simulator (no weights)" })}\n`);
    fs.renameSync(tmp, marker);
  } catch (error) {
    engineLine(`lab simulator: cannot mark the model cached at ${marker}: ${(error as Error).message}`);
  }
}

main().catch((error: Error) => exitOnError(`lab simulator: ${error.message}`));
