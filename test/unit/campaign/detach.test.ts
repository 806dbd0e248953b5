import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { once } from "node:events";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PulumiCommand } from "@pulumi/pulumi/automation";
import { detachedPulumi, detachedWrapper, findSetsid, pressCounter } from "../../../campaign/detach";

/** A fake `pulumi`: answers `version`, and `up` takes 1.5 s, then writes $MARKER. */
function fakePulumiRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fake-pulumi-"));
  fs.mkdirSync(path.join(root, "bin"));
  fs.writeFileSync(
    path.join(root, "bin", "pulumi"),
    '#!/bin/sh\nif [ "$1" = version ]; then echo v3.274.1; exit 0; fi\nsleep 1.5\necho finished > "$MARKER"\n',
    { mode: 0o755 },
  );
  return root;
}

/** Runs terminal-group.ts as its own process group and sends that group one SIGINT (a Ctrl-C) mid-`up`. */
async function ctrlCDuringUp(mode: "plain" | "detached"): Promise<{ lines: string[]; finished: boolean }> {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "marker-")), "up-finished");
  const child = spawn(
    process.execPath,
    ["--require", "tsx/cjs", path.join(__dirname, "terminal-group.ts"), fakePulumiRoot(), mode, marker],
    { detached: true, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  while (!out.includes("started\n")) await once(child.stdout!, "data");
  await new Promise((r) => setTimeout(r, 500));
  process.kill(-child.pid!, "SIGINT");
  await once(child, "exit");
  return { lines: out.trim().split("\n"), finished: fs.existsSync(marker) };
}

describe("campaign: Pulumi in a process group of its own", function () {
  this.timeout(30_000);
  const setsid = findSetsid(process.env["PATH"]);

  it("a terminal's Ctrl-C reaches a plain Pulumi CLI and cuts its up (the fault)", async () => {
    const r = await ctrlCDuringUp("plain");
    assert.equal(r.finished, false);
    assert.equal(r.lines[0], "started");
    // The group's SIGINT reaches the campaign and the CLI at once: which one prints first is the machine's
    // race (a CI run saw the CLI's failure before the campaign's "sigint"), so the order is not asserted.
    assert.deepEqual(
      r.lines
        .slice(1)
        .map((l) => (l.startsWith("failed: ") ? "failed" : l))
        .sort(),
      ["failed", "sigint"],
    );
  });

  it("the detached CLI lets the up finish: only the campaign hears the Ctrl-C", async function () {
    if (setsid === null) this.skip();
    const r = await ctrlCDuringUp("detached");
    assert.deepEqual(r.lines, ["started", "sigint", "ok"]);
    assert.equal(r.finished, true);
  });

  it("the campaign's own cancel (the Automation API's SIGINT) still reaches the detached CLI", async function () {
    if (setsid === null) this.skip();
    const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "marker-")), "up-finished");
    const real = await PulumiCommand.get({ root: fakePulumiRoot(), skipVersionCheck: true });
    const cmd = (await detachedPulumi(real, () => {})) as unknown as {
      run(
        args: string[],
        cwd: string,
        env: Record<string, string>,
        o?: unknown,
        e?: unknown,
        s?: AbortSignal,
      ): Promise<unknown>;
    };
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 500);
    await assert.rejects(cmd.run(["up"], os.tmpdir(), { MARKER: marker }, undefined, undefined, cancel.signal));
    assert.equal(fs.existsSync(marker), false);
  });

  it("writes a wrapper that execs the real CLI through setsid, its directory first on PATH", () => {
    assert.equal(
      detachedWrapper("/opt/pulumi's/bin/pulumi", "/usr/bin/setsid"),
      "#!/bin/sh\n" +
        "# Written by vllm-tuner's campaign: runs the Pulumi CLI in a session of its own (see campaign/detach.ts).\n" +
        `PATH='/opt/pulumi'\\''s/bin':"$PATH"; export PATH\n` +
        `exec '/usr/bin/setsid' '/opt/pulumi'\\''s/bin/pulumi' "$@"\n`,
    );
  });
});

describe("campaign: counting Ctrl-C presses", () => {
  it("counts SIGINTs within half a second of a press as that press (npm forwards, the terminal signals the group)", () => {
    const press = pressCounter(500);
    assert.deepEqual(
      [0, 3, 40, 800, 801, 1299, 1400].map((t) => press(t)),
      [1, null, null, 2, null, null, 3],
    );
  });
});
