import { CoreV1Api } from "@kubernetes/client-node";
import { apiErrorMessage, loadKubeConfig } from "../benchmarks";
import { UsageError } from "../common/usage-error";
import { mergedStackConfig, parseCandidateConfig, stackNames } from "../config";
import { labStateFile, runningLabState } from "../lab";
import type { CliOptions } from "./options";
import { BASELINE } from "./prepare";

/**
 * Where parallel slots may land, checked before anything is deployed. Each slot requests a GPU and
 * the scheduler places it; every slot mounts the warm model cache. A ReadWriteOnce claim is mounted
 * by the pods of one node only, so with GPUs on several nodes a slot the scheduler puts elsewhere
 * would stay Pending (Multi-Attach, or the volume's node affinity) until the campaign's wait gives up.
 */

/** A stack's cache, as the check needs it. */
interface StackCache {
  readonly stack: string;
  readonly cacheMode: string;
  readonly cacheClaimName: string;
  readonly cacheStorageClass: string;
  readonly cacheAccessMode: string;
}

interface PlacementInput {
  readonly parallel: number;
  /** Schedulable nodes advertising `nvidia.com/gpu`. */
  readonly gpuNodes: readonly string[];
  readonly stacks: readonly StackCache[];
  /** The warm claims already in the cluster, by name, with their access modes (a claim's modes never change). */
  readonly liveClaims: ReadonlyMap<string, readonly string[]>;
}

/**
 * Why `--parallel N` cannot run here, or null: more than one slot, GPUs on more than one node, and a
 * warm cache claim (declared, or live from an earlier run) without ReadWriteMany. Pure.
 */
export function cacheReachProblem(input: PlacementInput): string | null {
  if (input.parallel <= 1 || input.gpuNodes.length <= 1) return null;
  const problems: string[] = [];
  for (const s of input.stacks.filter((x) => x.cacheMode === "warm")) {
    const live = input.liveClaims.get(s.cacheClaimName);
    if (s.cacheAccessMode !== "ReadWriteMany")
      problems.push(
        `${s.stack}: cacheAccessMode is ${s.cacheAccessMode} (claim ${s.cacheClaimName}, storage class ${s.cacheStorageClass})`,
      );
    else if (live !== undefined && !live.includes("ReadWriteMany"))
      problems.push(
        `${s.stack}: the claim ${s.cacheClaimName} in the cluster is ${live.join(", ")} (a claim's access mode cannot change: name a new one in cacheClaimName)`,
      );
  }
  if (problems.length === 0) return null;
  return (
    `--parallel ${input.parallel} over ${input.gpuNodes.length} GPU nodes (${input.gpuNodes.join(", ")}): the model cache cannot be mounted from each node, ` +
    `so a slot the scheduler places on another node than the claim would stay Pending:\n  ${[...new Set(problems)].join("\n  ")}\n` +
    "Set cacheAccessMode: ReadWriteMany with a cacheStorageClass that offers it (NFS, CephFS, a cloud file store) in Pulumi.yaml, " +
    "or use --parallel 1 (see docs/campaign.md, Placement and caches)"
  );
}

/** The nodes' GPUs and the live warm claims, read from the cluster; throws when the nodes cannot be listed. */
async function readPlacement(
  kubeconfig: string | undefined,
  namespace: string,
): Promise<Pick<PlacementInput, "gpuNodes" | "liveClaims">> {
  const core = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
  try {
    const nodes = (await core.listNode()).items;
    const gpuNodes = nodes
      .filter((n) => n.spec?.unschedulable !== true && Number(n.status?.allocatable?.["nvidia.com/gpu"] ?? 0) > 0)
      .map((n) => n.metadata?.name ?? "?");
    const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace }).catch(() => ({ items: [] }))).items;
    const liveClaims = new Map(claims.map((c) => [c.metadata?.name ?? "", c.spec?.accessModes ?? []]));
    return { gpuNodes, liveClaims };
  } catch (err) {
    throw new Error(apiErrorMessage(err));
  }
}

/**
 * `--parallel N` > 1: refuses up front (throws the problem) when the cache cannot be mounted from
 * every GPU node. `projectDir` holds the stack files (the user's checkout; the tune's branch starts from it).
 */
export async function checkPlacement(
  opts: CliOptions,
  projectDir: string,
  repoDir: string,
  warn: (message: string) => void,
): Promise<void> {
  if (opts.parallel <= 1) return;
  const known = new Set(stackNames(projectDir));
  // A stack that does not exist or does not parse is the campaign's own error to report, later.
  const stacks = [...new Set([BASELINE, ...opts.stacks])].flatMap((stack) => {
    if (!known.has(stack)) return [];
    const parsed = parseCandidateConfig(mergedStackConfig(projectDir, stack));
    return parsed.ok ? [{ stack, ...parsed.config }] : [];
  });
  const namespace = stacks[0]?.namespace;
  if (namespace === undefined) return;
  const kubeconfig =
    opts.kubeconfig ?? (opts.mode === "lab" ? runningLabState(labStateFile(repoDir)).kubeconfig : undefined);
  let cluster: Pick<PlacementInput, "gpuNodes" | "liveClaims">;
  try {
    cluster = await readPlacement(kubeconfig, namespace);
  } catch (err) {
    // Listing nodes is cluster-scoped: a namespace's user may not be allowed to. Say what goes unchecked.
    warn(
      `--parallel ${opts.parallel}: the GPU nodes could not be read (${(err as Error).message}), so whether every node can mount the model cache is not checked; a slot placed on another node than a ReadWriteOnce claim stays Pending`,
    );
    return;
  }
  const problem = cacheReachProblem({ parallel: opts.parallel, stacks, ...cluster });
  // The user's setup to change before anything is deployed, as a bad flag is: exit 2, nothing changed.
  if (problem !== null) throw new UsageError(problem);
}
