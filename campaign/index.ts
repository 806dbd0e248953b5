/**
 * The campaign's face: what another layer (the review) reads of it, the campaign record as its
 * readers read it. From outside campaign/, import only this file (.dependency-cruiser.cjs,
 * "face-campaign"); tests may reach the files behind it.
 */

export { trafficOf } from "./commands/plan-replicas";
export { planBalancing, type ResultTwin, resultTwin, type TwinCandidate } from "./commands/plan-replicas-candidates";
export { type StoredCampaign, StoredCampaignSchema } from "./record";
