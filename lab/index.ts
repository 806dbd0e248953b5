/**
 * The lab's face: starting and stopping it, and its state as the campaign reads it. From outside lab/,
 * import only this file (.dependency-cruiser.cjs, "face-lab"); tests and scripts may reach behind it.
 */
export { startLab, stopLab } from "./cluster";
export { GPU_DEVICES_ANNOTATION } from "./manifests";
export type { LabOptions, LabState } from "./options";
export { KUBECONFIG_FILE, LAB_DIR, STATE_FILE } from "./options";
export { type LabServiceRef, labServiceUrl } from "./service-url";
export { LabNotRunningError, labStateFile, readLabState, runningLabState } from "./state";
