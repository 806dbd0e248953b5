/**
 * npm run lab:up | lab:down | lab:status — the GPU-less lab.
 * Options for up (all optional): --cold-start-seconds N --warm-start-seconds N --endpoint-port N
 *   --ttft-ms N --itl-ms N
 */
import { startLab, stopLab } from "./cluster";
import type { LabOptions } from "./options";
import { readLabState } from "./state";

function numberFlag(args: string[], name: string): number | undefined {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const value = Number(args[i + 1]);
  if (!Number.isFinite(value)) throw new Error(`${name} needs a number, got ${JSON.stringify(args[i + 1])}`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "up": {
      const options: Partial<LabOptions> = {};
      const set = <K extends keyof LabOptions>(key: K, flag: string) => {
        const v = numberFlag(args, flag);
        if (v !== undefined) (options as Record<string, number>)[key] = v;
      };
      set("coldStartSeconds", "--cold-start-seconds");
      set("warmStartSeconds", "--warm-start-seconds");
      set("endpointPort", "--endpoint-port");
      set("timeToFirstTokenMs", "--ttft-ms");
      set("interTokenLatencyMs", "--itl-ms");
      const state = await startLab(options);
      process.stdout.write(`${JSON.stringify(state, null, 2)}\n`);
      process.stderr.write(`export KUBECONFIG=${state.kubeconfig}\n`);
      return 0;
    }
    case "down":
      await stopLab();
      return 0;
    case "status": {
      const state = readLabState();
      process.stdout.write(state ? `${JSON.stringify(state, null, 2)}\n` : "lab is not running (npm run lab:up)\n");
      return state ? 0 : 1;
    }
    default:
      process.stderr.write("usage: tsx lab/cli.ts up|down|status\n");
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: Error) => {
    process.stderr.write(`lab: ${error.message}\n`);
    process.exitCode = 1;
  },
);
