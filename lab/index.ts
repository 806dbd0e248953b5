export { startLab, stopLab } from "./cluster";
export type { LabEvent } from "./kubelet";
export { GPU_DEVICES_ANNOTATION } from "./manifests";
export type { LabOptions, LabState } from "./options";
export { KUBECONFIG_FILE, LAB_DIR, SERVICES_FILE, STATE_FILE } from "./options";
export { LabNotRunningError, readLabState, readServiceEndpoint, runningLabState } from "./state";
