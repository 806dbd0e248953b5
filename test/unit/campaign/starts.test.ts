import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { readRestoreReadiness, restoreStartOf } from "../../../campaign/starts";
import type { DeploymentRef } from "../../../measure/kube/cluster";
import type { ReadinessReport } from "../../../measure/kube/readiness";
import { parseStartPhases } from "../../../measure/kube/start-phases";
import type { ReadinessPhase } from "../../../result/types";

const ROOT = path.join(__dirname, "..", "..", "..");
const HIT_LOG = "examples/gpu-campaign-2026-11-30/pod-logs/gemma4-12b-5dfbb7b9f9-pgs5j-0.log";
const hit = parseStartPhases(fs.readFileSync(path.join(ROOT, HIT_LOG), "utf8"));

const report = (changeAppliedAt: string, changeToReadySeconds: number): ReadinessReport => ({
  pod: { name: "gemma4-12b-5dfbb7b9f9-pgs5j", uid: "u1", nodeName: "gpu-0", restartCount: 0, phase: "Running" },
  revision: "3",
  changeAppliedAt,
  changeAppliedFrom: "Deployment managedFields: last change by pulumi-kubernetes before the pod",
  podCreatedAt: changeAppliedAt,
  scheduledAt: changeAppliedAt,
  initializedAt: changeAppliedAt,
  containerStartedAt: changeAppliedAt,
  readyAt: null,
  changeToReadySeconds,
  podCreatedToReadySeconds: changeToReadySeconds,
  restarts: 0,
  cacheClaim: "model-cache",
  cacheClaimCreatedAt: null,
  cacheState: "warm",
  cacheStateReason: "claim created before the previous revision: reused",
});

const ok = (r: ReadinessReport): ReadinessPhase => ({
  status: "ok",
  error: null,
  startedAt: "2026-11-30T07:50:10.000Z",
  finishedAt: "2026-11-30T07:50:10.100Z",
  report: r,
  startPhases: hit,
});

/** The restore's `up` began at 07:49:20 (this machine's clock). */
const BEGAN = Date.parse("2026-11-30T07:49:20.400Z");

describe("the restore's start (campaign/starts.ts)", () => {
  it("reads change → Ready and vLLM's phases of the pod the restore made", () => {
    assert.deepEqual(restoreStartOf(ok(report("2026-11-30T07:49:21Z", 46.2)), BEGAN), {
      changeToReadySeconds: 46.2,
      phases: hit,
      why: null,
    });
  });

  it("counts a change stamped in the second the restore began (the API server keeps whole seconds)", () => {
    assert.equal(restoreStartOf(ok(report("2026-11-30T07:49:20Z", 47)), BEGAN).changeToReadySeconds, 47);
  });

  it("says the restore changed nothing instead of reporting the running pod's old start as new", () => {
    assert.deepEqual(restoreStartOf(ok(report("2026-11-30T07:40:00Z", 171)), BEGAN), {
      changeToReadySeconds: null,
      phases: null,
      why: "restore: nothing to change, baseline's pod was already running (its Deployment last changed 2026-11-30T07:40:00Z, before the restore)",
    });
  });

  it("gives nulls with the readiness phase's reason when the cluster could not be read", () => {
    const phase: ReadinessPhase = {
      status: "unavailable",
      error: "no cluster access: ENOENT",
      startedAt: "2026-11-30T07:50:10.000Z",
      finishedAt: "2026-11-30T07:50:10.000Z",
      report: null,
    };
    assert.deepEqual(restoreStartOf(phase, BEGAN), {
      changeToReadySeconds: null,
      phases: null,
      why: "restore: no cluster access: ENOENT",
    });
    assert.deepEqual(restoreStartOf({ ...phase, status: "failed", error: "HTTP 404: pods not found" }, BEGAN), {
      changeToReadySeconds: null,
      phases: null,
      why: "restore: HTTP 404: pods not found",
    });
  });

  it("reads no cluster through a kubeconfig that does not exist: unavailable, with the file named", async () => {
    const ref: DeploymentRef = { namespace: "llm", deploymentName: "gemma4-12b", containerName: "vllm" };
    const missingFile = path.join(ROOT, ".no-such-kubeconfig");
    const phase = await readRestoreReadiness(missingFile, ref, 0, new AbortController().signal);
    assert.equal(phase.status, "unavailable");
    assert.equal(phase.report, null);
    assert.match(
      phase.error ?? "",
      /^no cluster access: ENOENT: no such file or directory, open '.*\.no-such-kubeconfig'$/,
    );
  });
});
