import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main as campaignMain } from "../../campaign/cli";
import { EXIT, EXIT_CODES, exitCodeTable } from "../../common/exit-codes";

const README = path.resolve(__dirname, "../../README.md");

describe("exit codes (one table for every CLI)", () => {
  it("never gives one number two meanings", () => {
    const codes = Object.values(EXIT_CODES).map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length);
    assert.deepEqual([EXIT.labNotRunning, EXIT.baselineNotRestored], [9, 8]);
  });

  it("the README's table is the table", () => {
    const text = fs.readFileSync(README, "utf8");
    const start = text.indexOf("| code | meaning |");
    assert.ok(start >= 0, "README.md has no exit-code table (| code | meaning |)");
    const lines = text.slice(start).split("\n");
    const table = lines.slice(
      0,
      lines.findIndex((l) => !l.startsWith("|")),
    );
    assert.deepEqual(table, exitCodeTable());
  });

  it("campaign --lab without a running lab exits labNotRunning, not baselineNotRestored", async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), "exit-codes-"));
    let stderr = "";
    try {
      const code = await campaignMain(["run", "--lab"], repo, { stdout: () => {}, stderr: (s) => (stderr += s) });
      assert.equal(code, EXIT.labNotRunning);
      assert.equal(
        stderr,
        `error: no lab state at ${path.join(repo, ".lab", "state.json")}: start the lab with \`npm run lab:up\` (or run the whole demo with \`npm run demo\`)\n`,
      );
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
