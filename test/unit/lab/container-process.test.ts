import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startLab } from "../../../lab";
import { ContainerProcess, criLogLine, tailMessage } from "../../../lab/process-engine/container-process";

describe("lab: a container's process", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-container-"));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes CRI log lines, as a node's container runtime does", () => {
    assert.equal(
      criLogLine(new Date("2026-11-30T03:39:44.123Z"), "stderr", "INFO ready"),
      "2026-11-30T03:39:44.123000000Z stderr F INFO ready\n",
    );
  });

  it("keeps the newest lines within the kubelet's 2 KiB termination message", () => {
    const lines = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, "0")} ${"x".repeat(95)}`);
    const message = tailMessage(lines);
    const kept = message.split("\n");
    assert.equal(kept.length, 20);
    assert.equal(kept[0]!.slice(0, 3), "080");
    assert.equal(kept[19]!.slice(0, 3), "099");
  });

  it("reports the exit code and the last log lines of a process that exits", async () => {
    const log = path.join(dir, "crash", "0.log");
    const p = new ContainerProcess(
      { command: "sh", args: ["-c", "echo starting; echo 'ValueError: bad' >&2; exit 3"] },
      log,
    );
    await p.waitGone();
    assert.equal(p.exited?.exitCode, 3);
    assert.equal(p.exited?.signal, null);
    assert.equal(p.exited?.message, "starting\nValueError: bad");
    const lines = fs.readFileSync(log, "utf8").trim().split("\n");
    assert.deepEqual(
      lines.map((l) => l.replace(/^\S+ /, "")),
      ["stdout F starting", "stderr F ValueError: bad"],
    );
  });

  it("stops the whole process group, children included, and is gone only when they are", async () => {
    const pidFile = path.join(dir, "child.pid");
    // The child ignores SIGTERM, as an engine core stuck in a CUDA call would: only SIGKILL ends it.
    const p = new ContainerProcess(
      {
        command: "sh",
        args: ["-c", `sh -c 'trap "" TERM; echo $$ > ${pidFile}; while :; do sleep 1; done' & wait`],
      },
      path.join(dir, "group", "0.log"),
    );
    while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, "utf8").trim() === "")
      await new Promise((r) => setTimeout(r, 50));
    const child = Number(fs.readFileSync(pidFile, "utf8").trim());
    p.stop(1);
    await p.waitGone();
    assert.equal(p.gone(), true);
    assert.throws(() => process.kill(child, 0), { code: "ESRCH" });
    assert.equal(p.exited?.exitCode, 143);
  });

  it("a command that cannot start ends as exit code 127 with the reason in the log", async () => {
    const p = new ContainerProcess(
      { command: "/nonexistent/vllm-python", args: [] },
      path.join(dir, "enoent", "0.log"),
    );
    await p.waitGone();
    assert.equal(p.exited?.exitCode, 127);
    assert.match(
      p.exited?.message ?? "",
      /cannot start \/nonexistent\/vllm-python: spawn \/nonexistent\/vllm-python ENOENT/,
    );
  });
});

describe("lab up --engine vllm on a machine without a GPU", () => {
  it("fails before anything starts, saying which", async () => {
    await assert.rejects(
      startLab({ engine: "vllm" }, { hasGpu: () => false, importVllm: () => undefined }),
      /needs an NVIDIA GPU/,
    );
    await assert.rejects(
      startLab({ engine: "vllm", vllmPython: "/py" }, { hasGpu: () => true, importVllm: () => "exit code 1" }),
      /`\/py -c "import vllm"` failed \(exit code 1\)/,
    );
  });
});
