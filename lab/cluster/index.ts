/**
 * The cluster as the lab describes it: its options and state on disk, the objects it makes (nodes,
 * GPUs), the Kubernetes API's errors and the checks of this machine. Every room of the lab reads it
 * and it reads none; it loads no Kubernetes client (the engine image bundles what it reads). From
 * elsewhere in lab/, import this file (.dependency-cruiser.cjs, LAB_ROOMS).
 */

export { ignoreStatus } from "./api-errors";
export { DeviceAllocator, gpuLayoutProblem, gpusRequested, type LabNodeLayout, labNodeLayout } from "./gpus";
export {
  GPU_DEVICES_ANNOTATION,
  GPU_NODE_LABELS,
  labNode,
  localPathStorageClass,
  PROVISIONER,
  podStatusAt,
  provisionedVolume,
  SEED_NODE_RESOURCES,
  VLLM_POD_SELECTOR,
} from "./manifests";
export {
  ENGINE_NODE,
  KUBECONFIG_FILE,
  LAB_DIR,
  LAB_ENGINES,
  LAB_NODES,
  type LabEngine,
  type LabNode,
  type LabOptions,
  LabOptionsSchema,
  type LabState,
  labNodeFromEnv,
  nodeEngineProblem,
  SERVICES_FILE,
  type ServiceEndpoints,
  SIM_TIMINGS,
  STATE_FILE,
  simCardGib,
  simTimingFitted,
} from "./options";
export { checkModelDir, checkVllmEngine, hasWeights, hostProbes, type VllmProbes } from "./preflight";
export { LabNotRunningError, labStateFile, readLabState, readServiceEndpoint, runningLabState } from "./state";
