import { measured } from "../../../measure/measured";
import {
  type CandidateEvidence,
  DEFAULT_PROPOSE_OPTIONS,
  type LevelEvidence,
  propose,
  type StartFailure,
} from "../../../verdict/propose";

/** One closed-loop level: nothing waits, nothing preempted, KV at 20 % unless told. */
export const level = (
  concurrency: number,
  requestsPerSecond: number,
  o: Partial<LevelEvidence> = {},
): LevelEvidence => ({
  concurrency,
  valid: true,
  requestsPerSecond,
  throughputBasis: "count",
  throughputRelativeError: null,
  peakRunning: measured(concurrency),
  peakWaiting: measured(0),
  preemptions: measured(0),
  peakKvCacheUsagePercent: measured(20),
  ...o,
});

/** Baseline as on the real GPU: maxNumSeqs 4, 0.80, 8192, KV ceiling 13 requests of 1692 tokens. */
export function baseline(o: Partial<CandidateEvidence> = {}): CandidateEvidence {
  return {
    stack: "baseline",
    knobs: {
      maxNumSeqs: measured(4),
      gpuMemoryUtilization: measured(0.8),
      maxModelLen: measured(8192),
      maxNumBatchedTokens: measured(0),
      enablePrefixCaching: measured(true),
    },
    levels: [level(1, 1), level(2, 2), level(4, 3.33)],
    kvCacheTokens: measured(22081),
    kvCeiling: measured({ requests: 13, tokensPerRequest: 1692, kvCacheTokens: 22081 }),
    measuredCeiling: measured({ concurrency: 4, atLeast: true, firstWaitingAt: null, firstFlatAt: null }),
    largestRequest: measured({ tokens: 3228, source: "inputLength 512 repeats: 3100 prompt + 128 output tokens" }),
    complete: true,
    valid: true,
    ...o,
  };
}

export const opts = (o: Partial<typeof DEFAULT_PROPOSE_OPTIONS> = {}) => ({ ...DEFAULT_PROPOSE_OPTIONS, ...o });
export const run = (
  b: CandidateEvidence,
  o = opts(),
  others: CandidateEvidence[] = [],
  failures: StartFailure[] = [],
) => propose({ baseline: b, candidates: others, startFailures: failures }, o);

/** Four requests wait at c=8 and req/s is flat from c=4: the GPU run's shape. */
export const saturatedAt8 = (o: Partial<CandidateEvidence> = {}) =>
  baseline({
    levels: [
      level(1, 1),
      level(2, 2),
      level(4, 3.33),
      level(8, 3.33, { peakWaiting: measured(4), peakRunning: measured(4) }),
    ],
    measuredCeiling: measured({ concurrency: 4, atLeast: false, firstWaitingAt: 8, firstFlatAt: 8 }),
    ...o,
  });
