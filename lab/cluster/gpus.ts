/**
 * The lab's GPUs: how `--gpus N --nodes M` spreads N devices over M simulated nodes, and which
 * device of its node each vLLM pod holds (what a device plugin's Allocate decides on a real node).
 */

/** One simulated GPU node and how many `nvidia.com/gpu` it advertises. */
export interface LabNodeLayout {
  readonly name: string;
  readonly gpus: number;
  /** Index on this machine of the node's device 0: the nodes' devices are this machine's, in node order. */
  readonly firstHostDevice: number;
}

/** The most GPUs or nodes a lab simulates (a large GPU host has 8; several of them, 64). */
export const MAX_LAB_GPUS = 64;

/** Why `--gpus`/`--nodes` cannot be laid out, naming the flag, its value and what is allowed; undefined when they can. */
export function gpuLayoutProblem(gpus: number, nodes: number): string | undefined {
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_LAB_GPUS)
    return `--nodes ${nodes}: expected a whole number of nodes from 1 to ${MAX_LAB_GPUS}`;
  if (!Number.isInteger(gpus) || gpus < 1 || gpus > MAX_LAB_GPUS)
    return `--gpus ${gpus}: expected a whole number of GPUs from 1 to ${MAX_LAB_GPUS}`;
  if (gpus < nodes)
    return `--gpus ${gpus} with --nodes ${nodes}: every GPU node needs at least one GPU, so --gpus must be at least --nodes (${nodes})`;
  return undefined;
}

/**
 * Pure: `nodes` node names and their GPUs, `gpus` in all, spread as evenly as possible (the first
 * nodes get one more when it does not divide). One node keeps `firstName`; several are
 * `<firstName without its -0>-0`, `-1`, ... so gpu-node-0 stays the first either way.
 */
export function labNodeLayout(firstName: string, gpus: number, nodes: number): LabNodeLayout[] {
  const problem = gpuLayoutProblem(gpus, nodes);
  if (problem !== undefined) throw new Error(problem);
  const base = firstName.replace(/-\d+$/, "");
  const layout: LabNodeLayout[] = [];
  let firstHostDevice = 0;
  for (let i = 0; i < nodes; i++) {
    const count = Math.floor(gpus / nodes) + (i < gpus % nodes ? 1 : 0);
    layout.push({ name: nodes === 1 ? firstName : `${base}-${i}`, gpus: count, firstHostDevice });
    firstHostDevice += count;
  }
  return layout;
}

/**
 * Which device indexes of each node are held, and by whom (a pod's uid). A device is held from the
 * pod's start until every process of it is gone, so a pod that replaces another on a full node
 * waits for the old engine to release the GPU, as a device plugin would not hand it out twice.
 */
export class DeviceAllocator {
  private readonly holders = new Map<string, { node: string; devices: number[] }>();

  constructor(private readonly layout: readonly LabNodeLayout[]) {}

  /**
   * Gives `holder` `count` free devices of `node` (the lowest free indexes), or undefined when the
   * node has fewer free. A holder that already has devices keeps the ones it has.
   */
  assign(node: string, holder: string, count: number): number[] | undefined {
    const held = this.holders.get(holder);
    if (held) return held.devices;
    const total = this.layout.find((n) => n.name === node)?.gpus ?? 0;
    const taken = new Set<number>();
    for (const h of this.holders.values()) if (h.node === node) for (const d of h.devices) taken.add(d);
    const free = Array.from({ length: total }, (_, i) => i).filter((i) => !taken.has(i));
    if (free.length < count) return undefined;
    const devices = free.slice(0, count);
    this.holders.set(holder, { node, devices });
    return devices;
  }

  release(holder: string): void {
    this.holders.delete(holder);
  }

  /** The devices `holder` holds on its node, or undefined. */
  devicesOf(holder: string): readonly number[] | undefined {
    return this.holders.get(holder)?.devices;
  }

  /** This machine's indexes of a node's devices (what CUDA_VISIBLE_DEVICES names for a real engine). */
  hostDevices(node: string, devices: readonly number[]): number[] {
    const first = this.layout.find((n) => n.name === node)?.firstHostDevice ?? 0;
    return devices.map((d) => first + d);
  }
}

/** The GPUs a pod's container asks for: its `nvidia.com/gpu` limit (the device plugin's rule), else its request, else 0. */
export function gpusRequested(resources: {
  limits?: Record<string, unknown>;
  requests?: Record<string, unknown>;
}): number {
  const raw = resources.limits?.["nvidia.com/gpu"] ?? resources.requests?.["nvidia.com/gpu"];
  const n = Number(raw ?? 0);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
