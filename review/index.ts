export { argChanges, argUnits, diffArgUnits } from "./args";
export { EXIT, main as reviewMain } from "./cli";
export { compareEvidence, type Evidence, type FoundSummary } from "./evidence";
export { COMMENT_MARKER, renderReviewMarkdown } from "./markdown";
export { diffObjects, renderObjects, restartsPods } from "./objects";
export { buildReview, type Review } from "./review";
export { reviewStack, type StackReview } from "./stack-review";
