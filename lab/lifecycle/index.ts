/**
 * The running lab: kwok's control plane started and stopped, with the node that runs its pods (the
 * simulator, the process engine's agent or the real node), and where its Services answer. From
 * elsewhere in lab/, import this file (.dependency-cruiser.cjs, LAB_ROOMS).
 */

export { startLab, stopLab } from "./cluster";
export { type LabServiceRef, labServiceUrl } from "./service-url";
