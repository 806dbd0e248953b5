/**
 * The lab's face: starting and stopping it, and its state as the campaign reads it. From outside lab/,
 * import only this file (.dependency-cruiser.cjs, "face-lab"); tests and scripts may reach behind it.
 */

export type { LabOptions, LabState } from "./cluster";
export {
  GPU_DEVICES_ANNOTATION,
  KUBECONFIG_FILE,
  LAB_DIR,
  LabNotRunningError,
  labStateFile,
  readLabState,
  runningLabState,
  STATE_FILE,
} from "./cluster";
export { type LabServiceRef, labServiceUrl, startLab, stopLab } from "./lifecycle";
