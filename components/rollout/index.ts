/**
 * The face of components' rollout judgement that the campaign's watchdog shares with `up`'s wait: why a
 * pod will not become Ready without a change. Pure, loads no Pulumi runtime (.dependency-cruiser.cjs,
 * "face-components", "components-pure-parts").
 */
export { containerFailure, unschedulable } from "./pod-failure";
export { podEnded } from "./template-rollout";
