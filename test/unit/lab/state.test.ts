import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LabOptionsSchema } from "../../../lab/cluster/options";
import { LabNotRunningError, labStateFile, readLabState, runningLabState } from "../../../lab/cluster/state";

const made: string[] = [];

function repoWith(state: unknown): { repo: string; file: string } {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), "lab-state-"));
  made.push(repo);
  const file = labStateFile(repo);
  if (state !== undefined) {
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, typeof state === "string" ? state : JSON.stringify(state));
  }
  return { repo, file };
}

const STATE = {
  clusterName: "vllm-lab-1234abcd",
  nodeName: "gpu-node-0",
  kubeconfig: ".lab/kubeconfig",
  endpoint: "http://127.0.0.1:8100",
  controllerPid: 4242,
  options: LabOptionsSchema.parse({}),
  startedAt: "2026-11-30T06:00:00.000Z",
  simulated: true,
};

describe("lab state (one schema in lab/cluster/options.ts, one reader in lab/cluster/state.ts)", () => {
  after(() => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reads a running lab's state with its kubeconfig made absolute", () => {
    const { repo, file } = repoWith(STATE);
    const state = runningLabState(file, (pid) => pid === 4242);
    assert.equal(state.kubeconfig, path.join(repo, ".lab", "kubeconfig"));
    assert.equal(state.endpoint, "http://127.0.0.1:8100");
  });

  it("no state file: undefined to read, LabNotRunningError naming lab:up to require", () => {
    const { file } = repoWith(undefined);
    assert.equal(readLabState(file), undefined);
    assert.throws(
      () => runningLabState(file),
      (e: unknown) => e instanceof LabNotRunningError && e.message.startsWith(`no lab state at ${file}: start the lab`),
    );
  });

  it("a gone controller is LabNotRunningError naming its pid", () => {
    const { file } = repoWith(STATE);
    assert.throws(
      () => runningLabState(file, () => false),
      (e: unknown) =>
        e instanceof LabNotRunningError &&
        e.message === `the lab in ${file} is not running (controller pid 4242 is gone): npm run lab:up`,
    );
  });

  it("a state this version does not understand names the field and the restart", () => {
    const { file } = repoWith({ ...STATE, endpoint: "8100" });
    assert.throws(() => readLabState(file), /endpoint: .*; restart the lab: npm run lab:down && npm run lab:up$/);
    const broken = repoWith("{not json");
    assert.throws(() => readLabState(broken.file), /is not a lab state this version understands/);
  });
});
