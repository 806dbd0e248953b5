/**
 * The process engine's own node (`--engine vllm`): its agent (controller.ts, run in the background),
 * the lab's kubelet and the logs kwok serves of its pods, each pod's processes and volumes, the
 * Services' loopback routes and the local-path provisioner. From elsewhere in lab/, import this file
 * (.dependency-cruiser.cjs, LAB_ROOMS).
 */
export { freeLoopbackPort } from "./vllm-engine";
