import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { PulumiCommand } from "@pulumi/pulumi/automation";
import { automationDriver } from "../../../campaign/pulumi";

/**
 * The CLI commands the campaign's driver runs per `up` (docs/switch-cost.md): each is a Go CLI
 * start, so the exact list is the cost. A recording PulumiCommand answers them; the real CLI runs
 * in test/integration/campaign/driver.test.ts.
 */
function recordingCommand(ran: string[][]): PulumiCommand {
  const run = async (args: string[]) => {
    ran.push(args.filter((a) => a !== "--non-interactive"));
    const command = args.slice(0, 2).join(" ");
    const stdout =
      command === "stack output" ? '{"args":["m"],"nodePort":null}' : command === "stack history" ? "[]" : "";
    return { stdout, stderr: "", code: 0 };
  };
  return { command: "pulumi", version: null, run } as unknown as PulumiCommand;
}

describe("campaign StackDriver: the CLI commands per up", () => {
  let workDir: string;
  before(() => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), "driver-unit-"));
    fs.writeFileSync(path.join(workDir, "Pulumi.yaml"), "name: driver-unit\nruntime: nodejs\n");
  });
  after(() => fs.rmSync(workDir, { recursive: true, force: true }));

  it("selects a stack once, then runs only up and one stack output per up", async () => {
    const ran: string[][] = [];
    const driver = automationDriver({ workDir, envVars: {}, pulumiCommand: recordingCommand(ran) });
    const first = await driver.up("seqs1", { log: () => {} });
    await driver.up("seqs1", { log: () => {} });
    assert.deepEqual(first, { args: ["m"], nodePort: null });
    const up = ["up", "--yes", "--skip-preview", "--color", "never", "--exec-kind", "auto.local", "--stack", "seqs1"];
    const output = ["stack", "output", "--json", "--show-secrets", "--stack", "seqs1"];
    assert.deepEqual(ran, [["stack", "select", "--stack", "seqs1"], up, output, up, output]);
  });

  it("sets a run's config in one command and selects the stack again after it was removed", async () => {
    const ran: string[][] = [];
    const driver = automationDriver({ workDir, envVars: {}, pulumiCommand: recordingCommand(ran) });
    await driver.up("cold", { log: () => {}, config: { "p:a": "1", "p:b": "2" } });
    await driver.destroy("cold", { log: () => {}, remove: true });
    await driver.up("cold", { log: () => {} });
    assert.deepEqual(
      ran.map((args) => args.slice(0, 3).join(" ")),
      [
        "stack select --stack",
        "config set-all --stack",
        "up --yes --skip-preview",
        "stack output --json",
        "destroy --yes --skip-preview",
        // Stack.destroy's own summary: a destroy is not on a switch's path, so it keeps it.
        "stack history --json",
        "stack rm --yes",
        "stack select --stack",
        "up --yes --skip-preview",
        "stack output --json",
      ],
    );
  });
});
