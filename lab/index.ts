export { startLab, stopLab } from "./cluster";
export type { LabEvent } from "./kubelet";
export type { LabOptions, LabState } from "./options";
export { KUBECONFIG_FILE, LAB_DIR, STATE_FILE } from "./options";
export { LabNotRunningError, readLabState, runningLabState } from "./state";
