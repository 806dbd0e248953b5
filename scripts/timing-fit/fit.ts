/**
 * Refits the lab's engine timing (twin/step-model.ts) to the real-vLLM runs under examples/ and
 * prints the constants and each recorded level beside the model's replay of it:
 *   npx tsx scripts/timing-fit/fit.ts
 * The method is docs/lab-timing-model.md's "The fit", in twin/fit.ts (`fitTimingModel`); this script reads and prints.
 */
import { fitTimingModel, replayLevel } from "../../twin/fit";
import { recordedInputLengths, recordedLevels } from "./recorded";

/** The fitter is twin/fit.ts's (one fitter); these names stay for the tests and docs that use them. */
export { fitTimingModel, replayLevel as replayOf };

const pct = (model: number, real: number) => `${(((model - real) / real) * 100).toFixed(1)} %`;

function main(): void {
  const levels = recordedLevels();
  const params = fitTimingModel(levels, recordedInputLengths());
  process.stdout.write(`${JSON.stringify(params, null, 2)}\n\n`);
  process.stdout.write(
    "| file | seqs | c | req/s real / model | TTFT mean ms real / model | TPOT mean ms real / model | ITL p50 ms real / model |\n| --- | --- | --- | --- | --- | --- | --- |\n",
  );
  for (const l of levels) {
    const m = replayLevel(params, l);
    const cell = (real: number, model: number, d = 1) =>
      `${real.toFixed(d)} / ${model.toFixed(d)} (${pct(model, real)})`;
    process.stdout.write(
      `| ${l.file} | ${l.maxNumSeqs} | ${l.concurrency} | ${cell(l.requestsPerSecond, m.requestsPerSecond, 3)} | ${cell(l.ttftMeanMs, m.ttftMeanMs)} | ${cell(l.tpotMeanMs, m.tpotMeanMs, 2)} | ${cell(l.itlP50Ms, m.itlP50Ms, 2)} |\n`,
    );
  }
}

if (require.main === module) main();
