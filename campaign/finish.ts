import { parseStackOutputs, resolveEndpoint } from "../benchmarks";
import type { CampaignDeps, CampaignSettings } from "./deps";
import { BASELINE, errorLine, type Prepared } from "./prepare";
import type { CleanupRecord, RestoreRecord } from "./record";
import { recoveryCommand } from "./recover";
import { restoreStartOf } from "./starts";
import { verifyBaseline } from "./verify";

/** What baseline's restore is checked against: its parsed config and rendered args. */
type BaselineExpectation = Pick<Prepared, "config" | "serving" | "args">;

/** The part of the campaign's world a restore and a cleanup touch (`campaign recover` has no more). */
type FinishDeps = Pick<
  CampaignDeps,
  "driver" | "progress" | "pulumiLog" | "now" | "waitServing" | "observe" | "endpointOf" | "restoreReadiness"
>;

/**
 * Restores baseline and verifies it the way the seed's engineer did (step 8), plus the live args.
 * Never throws: a failed `up` is the record's `error`.
 */
export async function restoreBaseline(
  settings: CampaignSettings,
  deps: FinishDeps,
  base: BaselineExpectation,
  cancel: AbortSignal,
  total: number,
): Promise<RestoreRecord> {
  const p = deps.progress;
  p.begin("restore", total, BASELINE);
  deps.pulumiLog(`\n===== restore ${BASELINE} =====\n`);
  const t0 = deps.now();
  try {
    p.phase("up");
    const outputs = parseStackOutputs(
      await deps.driver.up(BASELINE, { log: deps.pulumiLog, signal: cancel }),
      `stack ${BASELINE}`,
    );
    const upSeconds = (deps.now() - t0) / 1000;
    p.took(upSeconds);
    const endpoint =
      settings.endpoint ?? (await deps.endpointOf?.(outputs, cancel)) ?? resolveEndpoint(outputs, undefined);
    p.phase("verify");
    // Wait (bounded) so a slow switch-over shows as a verification failure, not a race.
    await deps.waitServing(endpoint, base.serving, cancel).catch(() => undefined);
    const ref = { namespace: outputs.namespace, deploymentName: outputs.deploymentName, containerName: "vllm" };
    const observed = await deps.observe(endpoint, ref);
    const verification = verifyBaseline(observed, {
      servedModelName: base.serving.servedModelName,
      maxModelLen: base.serving.maxModelLen,
      args: base.args,
      image: typeof base.config["image"] === "string" ? base.config["image"] : "",
      // The parsed config through JSON (prepare), as image is: a number; its schema's least value otherwise.
      replicas: typeof base.config["replicas"] === "number" ? base.config["replicas"] : 1,
    });
    p.end(
      verification.ok ? "ok" : "VERIFICATION FAILED",
      verification.ok
        ? undefined
        : verification.checks
            .filter((c) => !c.ok)
            .map((c) => `${c.name}: ${c.detail}`)
            .join("; "),
    );
    // Read after verifying, so a slow switch-over has had its bounded wait and the pod is the restored one.
    const start =
      deps.restoreReadiness === undefined
        ? undefined
        : restoreStartOf(await deps.restoreReadiness({ ...ref, cacheClaimName: outputs.cacheClaimName }, cancel), t0);
    return { upSeconds, error: null, verification, ...(start === undefined ? {} : { start }) };
  } catch (err) {
    p.end("FAILED", `${errorLine(err)}; restore with: ${recoveryCommand(settings)}; Pulumi log: ${settings.logFile}`);
    return { upSeconds: null, error: errorLine(err), verification: null };
  }
}

/**
 * Destroys the stacks the campaign created for this run only (cold candidates, whose claim can go
 * only once no pod mounts it: after baseline is back). `keep` names why one is kept (a flag), or
 * null; `what` says what the destroy removes, for the record. `restore`: baseline's restore, whose
 * error keeps every stack; a parallel slot's own stacks, removed as soon as its slot is done, pass
 * `{ error: null }` (their server and claims are the slot's, nothing slot 0's restore needs).
 */
export async function destroyRunStacks(
  deps: Pick<FinishDeps, "driver" | "progress" | "pulumiLog" | "now">,
  stacks: readonly {
    readonly stack: string;
    readonly keep: string | null;
    readonly what: string;
    /** Also remove the stack (a parallel slot's, made for this campaign). */
    readonly remove: boolean;
  }[],
  restore: Pick<RestoreRecord, "error">,
  cancel: AbortSignal,
  total: number,
): Promise<CleanupRecord[]> {
  const p = deps.progress;
  const cleanup: CleanupRecord[] = [];
  for (const { stack, keep, what, remove } of stacks) {
    if (keep !== null) {
      cleanup.push({ stack, action: "kept", detail: keep, seconds: null });
      continue;
    }
    if (restore.error !== null) {
      cleanup.push({
        stack,
        action: "kept",
        detail: `baseline not restored, its claim may still be mounted; destroy it after restoring: pulumi destroy --stack ${stack}`,
        seconds: null,
      });
      continue;
    }
    p.begin("cleanup", total, stack);
    p.phase("destroy");
    const t = deps.now();
    try {
      await deps.driver.destroy(stack, { log: deps.pulumiLog, signal: cancel, ...(remove ? { remove } : {}) });
      const s = (deps.now() - t) / 1000;
      p.took(s);
      p.end("ok");
      cleanup.push({ stack, action: "destroyed", detail: what, seconds: s });
    } catch (err) {
      p.end("FAILED", errorLine(err));
      cleanup.push({
        stack,
        action: "kept",
        detail: `destroy failed: ${errorLine(err)}; retry: pulumi destroy --stack ${stack}`,
        seconds: null,
      });
    }
  }
  return cleanup;
}

/** What `campaign recover` found a killed campaign left beside baseline. */
interface Leftovers {
  /** Cold candidates' stacks (their claims go once baseline is back). */
  readonly cold: readonly string[];
  /** Parallel slots' stacks (`<stack>.s<s>`), removed with their stack files. */
  readonly slots: readonly string[];
  readonly keepCold: boolean;
  readonly keepSlots: boolean;
}

/**
 * `campaign recover`'s end of a campaign, on the campaign's own path: baseline restored and verified
 * (`restoreBaseline`), then, only when it verified, the leftover cold and slot stacks destroyed
 * (`destroyRunStacks`). Never throws; nothing to cancel (recover has no Ctrl-C protocol of its own).
 */
export async function recoverBaseline(
  settings: CampaignSettings,
  deps: FinishDeps,
  base: BaselineExpectation,
  leftovers: Leftovers,
): Promise<{ readonly restore: RestoreRecord; readonly cleanup: CleanupRecord[] }> {
  const never = new AbortController().signal;
  const restore = await restoreBaseline(settings, deps, base, never, 0);
  if (restore.error !== null || restore.verification?.ok !== true) return { restore, cleanup: [] };
  const stacks = [
    ...leftovers.cold.map((stack) => ({
      stack,
      keep: leftovers.keepCold ? "--keep-cold" : null,
      what: "cold stack and its claim destroyed",
      remove: false,
    })),
    ...leftovers.slots.map((stack) => ({
      stack,
      keep: leftovers.keepSlots ? "--keep-slots" : null,
      what: "a parallel slot's server and stack removed",
      remove: true,
    })),
  ];
  return { restore, cleanup: await destroyRunStacks(deps, stacks, restore, never, 0) };
}
