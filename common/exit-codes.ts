import { markdownTableLines } from "./markdown-table";

/**
 * The exit codes of every CLI of this repository (benchmark, campaign, review): one table, so a number
 * never means two things and a script can act on it without knowing which command ran. The
 * README's "Exit codes" table is checked against it (test/unit/exit-codes.test.ts).
 */
export const EXIT_CODES = {
  ok: { code: 0, meaning: "done: every result valid (campaign: and baseline restored and verified)" },
  error: {
    code: 1,
    meaning: "the command itself failed (a tool missing, a file unreadable, a bug): the message says what",
  },
  usage: { code: 2, meaning: "usage: bad flags, scenario, stack outputs or stack list; nothing was changed" },
  unreachable: { code: 3, meaning: "benchmark: the endpoint was unreachable before any phase" },
  httpError: { code: 4, meaning: "benchmark: the endpoint answered `/health` with an HTTP error before any phase" },
  timeout: { code: 5, meaning: "benchmark: the endpoint timed out before any phase" },
  invalidResults: {
    code: 6,
    meaning:
      "ran to the end, but a result is not valid (a phase failed, a level is invalid; campaign: a candidate failed or measured invalid); results are written",
  },
  noRecommendation: { code: 7, meaning: "`compare`: no candidate qualifies under the rule" },
  baselineNotRestored: { code: 8, meaning: "campaign: baseline could not be restored or did not verify" },
  labNotRunning: { code: 9, meaning: "campaign `--lab`: the lab is not running (or stopped during the campaign)" },
  checksFailed: {
    code: 10,
    meaning: "review: a changed stack's config is invalid or breaks the one-knob rule (the message names the keys)",
  },
  interrupted: {
    code: 130,
    meaning:
      "interrupted (Ctrl-C): partial results written and marked incomplete (campaign: baseline restored and verified)",
  },
} as const;

type ExitName = keyof typeof EXIT_CODES;

/** `EXIT.usage` is 2, and so on. */
export const EXIT = Object.fromEntries(Object.entries(EXIT_CODES).map(([k, v]) => [k, v.code])) as {
  readonly [K in ExitName]: (typeof EXIT_CODES)[K]["code"];
};

/** The README's table. Pure. */
export function exitCodeTable(): string[] {
  return markdownTableLines(
    ["code", "meaning"],
    Object.values(EXIT_CODES).map((e) => [String(e.code), e.meaning]),
  );
}
