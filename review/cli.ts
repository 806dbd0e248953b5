import * as path from "node:path";
import { EXIT } from "../common/exit-codes";
import { type Io, processIo } from "../common/io";
import { UsageError } from "../common/usage-error";
import { renderReviewMarkdown } from "./markdown";
import { parseReviewOptions, USAGE } from "./options";
import { reviewTraffic } from "./replicas";
import { buildReview } from "./review";
import { summaryFinder } from "./summaries";

/** Exit codes of `npm run review`: the repository's one table (common/exit-codes.ts). */
export { EXIT };

/** Entry point with the repository passed in, so the command is testable in-process. */
export function main(argv: readonly string[], repoDir = process.cwd(), io: Io = processIo): number {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  try {
    const opts = parseReviewOptions(argv, repoDir);
    const warn = (m: string) => io.stderr(`warning: ${m}\n`);
    const review = buildReview({
      repoDir,
      baseRef: opts.base,
      findSummary: summaryFinder(opts.evidence, repoDir, warn),
      evidenceFrom:
        `${opts.evidence.kind === "results" ? "results in" : ""} \`${path.relative(repoDir, opts.evidence.dir) || "."}/\``.trim(),
      traffic: opts.trafficPerSecond === null ? undefined : reviewTraffic(opts.trafficPerSecond),
    });
    io.stdout(opts.json ? `${JSON.stringify(review, null, 2)}\n` : renderReviewMarkdown(review));
    for (const s of review.stacks.filter((x) => !x.ok)) {
      io.stderr(`${s.stack}: ${[s.problems, s.oneKnobViolation].filter((x) => x !== null).join("\n")}\n`);
    }
    for (const o of review.others) io.stderr(`${o.stack}: ${o.problem}\n`);
    return review.ok ? EXIT.ok : EXIT.checksFailed;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n\n${USAGE}\n`);
      return EXIT.usage;
    }
    io.stderr(`error: ${(err as Error).message}\n`);
    return EXIT.error;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
