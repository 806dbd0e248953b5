export { startLab, stopLab, readLabState } from "./cluster";
export type { LabOptions, LabState } from "./options";
export { KUBECONFIG_FILE, LAB_DIR, STATE_FILE } from "./options";
export type { LabEvent } from "./kubelet";
