import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileBackendLocks, isStale, orphanedPulumiProcesses } from "../../../campaign/recover";

describe("campaign recover: stale locks", () => {
  it("lists a file backend's lock files of one stack, with who took them", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "backend-"));
    const locks = path.join(dir, ".pulumi", "locks", "organization", "vllm-tuner");
    fs.mkdirSync(path.join(locks, "seqs1"), { recursive: true });
    fs.mkdirSync(path.join(locks, "seqs2"), { recursive: true });
    const lock = { pid: 4242, username: "u", hostname: "gpu-box", timestamp: "2026-11-30T06:00:00Z" };
    fs.writeFileSync(path.join(locks, "seqs1", "a.json"), JSON.stringify(lock));
    fs.writeFileSync(path.join(locks, "seqs2", "b.json"), JSON.stringify(lock));
    assert.deepEqual(fileBackendLocks(dir, "vllm-tuner", "seqs1"), [
      { file: path.join(locks, "seqs1", "a.json"), pid: 4242, hostname: "gpu-box", timestamp: "2026-11-30T06:00:00Z" },
    ]);
    assert.deepEqual(fileBackendLocks(dir, "vllm-tuner", "baseline"), []);
  });

  it("calls a lock stale only when its process is gone from this host", () => {
    const lock = { file: "f", pid: 4242, hostname: "gpu-box", timestamp: null };
    assert.equal(
      isStale(lock, "gpu-box", () => false),
      true,
    );
    assert.equal(
      isStale(lock, "gpu-box", () => true),
      false,
    );
    assert.equal(
      isStale(lock, "laptop", () => false),
      false,
      "another host's process cannot be checked",
    );
    assert.equal(
      isStale({ ...lock, pid: null }, "gpu-box", () => false),
      false,
    );
  });
});

describe("campaign recover: orphaned plugins", () => {
  const work = "/repo/.lab/project";
  it("takes Pulumi's plugins and program left in the work directory without their CLI", () => {
    const procs = [
      { pid: 1, ppid: 0, command: "/sbin/init", cwd: "/" },
      { pid: 10, ppid: 1, command: "/bin/pulumi-language-nodejs 127.0.0.1:4000", cwd: work },
      { pid: 11, ppid: 1, command: "/bin/pulumi-resource-kubernetes 127.0.0.1:4000", cwd: work },
      { pid: 12, ppid: 10, command: "node /repo/node_modules/@pulumi/pulumi/cmd/run --engine 1", cwd: work },
      // a live `pulumi up` of someone else's: its plugins have a Pulumi parent
      { pid: 20, ppid: 1, command: "/bin/pulumi up --yes", cwd: work },
      { pid: 21, ppid: 20, command: "/bin/pulumi-resource-kubernetes 127.0.0.1:5000", cwd: work },
      // another project's orphan
      { pid: 30, ppid: 1, command: "/bin/pulumi-resource-kubernetes 127.0.0.1:6000", cwd: "/elsewhere" },
      { pid: 40, ppid: 1, command: "vim notes", cwd: work },
    ];
    assert.deepEqual(
      orphanedPulumiProcesses(procs, work).map((p) => p.pid),
      [10, 11, 12],
    );
  });
});
