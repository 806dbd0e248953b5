/**
 * The lab's real node (docs/lab.md, "The real node (opt-in)"): containerd with runc, CNI, a kubelet
 * and kube-proxy of the API server's release, in the lab's network namespace. From elsewhere in
 * lab/, import this file, not the ones behind it.
 */
export { type NodeLayout, nodeLayout } from "./layout";
export { findNodeParts } from "./parts";
export { type RealNodeSpec, realNodeProblem, startRealNode, waitForRealNode } from "./start";
