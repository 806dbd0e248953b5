import { boundText, crosses, measuredKv, notFired, proposal, type RuleInput, type RuleResult } from "./rule-kit";

/** "Far below": the largest request at most this share of maxModelLen. */
const HEADROOM_SHARE = 0.5;
/** The schema's lower limit of `maxModelLen` (config/schema.ts). */
const MIN_MODEL_LEN = 256;

const nextPowerOfTwo = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

/**
 * Context headroom: the scenario's largest request (prompt + max_tokens, over the load, input-length
 * and sequential phases) is at most half of `maxModelLen`, and the user declared the context they
 * need (`--min-context`). Without that declaration the rule never fires: the scenario is not the
 * users' traffic, and a shorter context turns their longer requests into HTTP 400s.
 *
 * Step: the smallest power of two at or above both the largest request and the declared minimum
 * (at least 256), when that is below maxModelLen and above any value that could not start. What
 * it frees in KV is said only when a candidate with that maxModelLen was measured. Pure.
 */
export function contextHeadroom(input: RuleInput): RuleResult {
  const b = input.baseline;
  const len = b.knobs.maxModelLen;
  const largest = b.largestRequest;
  if (len.value === null) return notFired(`context-headroom: maxModelLen unknown (${len.reason})`);
  if (largest.value === null) return notFired(`context-headroom: largest request unknown (${largest.reason})`);
  const L = len.value;
  const R = largest.value.tokens;
  const sizeText = `${b.stack}'s largest request is ${R} tokens (${largest.value.source}) of maxModelLen ${L}`;
  if (R > HEADROOM_SHARE * L) return notFired(`context-headroom: ${sizeText}, more than half of it`);
  const minContext = input.opts.minContext;
  if (minContext === null)
    return notFired(
      `context-headroom: ${sizeText}, under half of it, but no --min-context was declared (only the users know the longest context they need)`,
    );
  let to = Math.max(MIN_MODEL_LEN, nextPowerOfTwo(Math.max(R, minContext)));
  if (to >= L)
    return notFired(
      `context-headroom: ${sizeText}, but --min-context ${minContext} needs ${to} tokens, not below ${L}`,
    );
  let step = `step: the smallest power of two ≥ max(largest request ${R}, --min-context ${minContext})`;
  const blocked = crosses(input.bounds, "maxModelLen", to);
  if (blocked !== undefined) {
    to = blocked.value + 1 >= L ? L : nextPowerOfTwo(blocked.value + 1);
    if (to >= L) return notFired(`context-headroom: ${sizeText}, but ${boundText(blocked)}`);
    step += `, kept above ${blocked.value} (${boundText(blocked)})`;
  }
  const measuredText = measuredKv(input, "maxModelLen", to);
  return {
    fired: true,
    proposal: proposal("maxModelLen", L, to, "context-headroom", [
      `${sizeText}: at most half of it`,
      `--min-context ${minContext} allows ${to}`,
      `${step}: ${L} → ${to}`,
      measuredText ??
        `what ${to} frees in KV was not measured (no candidate with maxModelLen ${to} and baseline's other knobs has a result)`,
    ]),
  };
}
