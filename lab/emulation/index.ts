/**
 * The emulation of vLLM: the KV pool and the scheduler's admission, the engine's timing model and
 * the simulator's front door (llm-d-inference-sim behind the KV proxy), and the memory emulation of
 * a smaller card. From elsewhere in lab/, import this file (.dependency-cruiser.cjs, LAB_ROOMS).
 */

export { batchBudget, H200_TIMING } from "../../twin/step-model";
export { emulatedKvCacheBytes, emulationFormula, utilizationOf } from "./emulate-memory";
export { engineLine, exitOnError } from "./engine-log";
export { KvStartupError, kvModelFormula, kvPoolFor } from "./kv-model";
export type { KvProxyConfig } from "./kv-proxy";
export { simArgsFor } from "./sim-args";
export { type SimPodConfig, serveSimulator } from "./sim-serve";
export { splice } from "./splice";
