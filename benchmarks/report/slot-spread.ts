import { num } from "../../common/format";
import { markdownTableLines } from "../../common/markdown-table";
import type { Recommendation } from "../../verdict";

/** A placement as a campaign record holds it: a value, or null with the reason. */
type Placed = { readonly value: string | null; readonly reason: string | null } | undefined;

interface SlotRow {
  readonly stack: string;
  readonly slot?: number;
  readonly node?: Placed;
  readonly gpu?: Placed;
}

const placed = (p: Placed) => (p === undefined ? "-" : (p.value ?? `n/a (${p.reason})`));

/**
 * The report's "Parallel slots" section: each slot's control throughput (baseline runs in every
 * slot), the slot-to-slot spread that joined the recommendation's tolerance, and where each
 * candidate ran. Empty for a campaign of one slot. Pure.
 */
export function slotSpreadLines(recommendation: Recommendation, rows: readonly SlotRow[]): string[] {
  if (recommendation.slotControls === undefined && !rows.some((r) => r.slot !== undefined)) return [];
  const controls = recommendation.slotControls ?? [];
  const spread = recommendation.slotNoise;
  return [
    "## Parallel slots",
    "",
    spread === null || spread === undefined
      ? "Slot-to-slot spread: not measured (fewer than two slots have a complete control)."
      : `Slot-to-slot spread of the controls: ${num(spread * 100, 1)} % (it joins the tolerance: at least ${num(recommendation.tolerance * 100, 1)} %).`,
    "",
    ...markdownTableLines(
      ["slot", "control req/s", "controls"],
      controls.map((c) => [String(c.slot), num(c.requestsPerSecond, 3), c.stacks.join(", ")]),
    ),
    "",
    ...markdownTableLines(
      ["stack", "slot", "node", "GPU"],
      rows.filter((r) => r.slot !== undefined).map((r) => [r.stack, String(r.slot), placed(r.node), placed(r.gpu)]),
    ),
    "",
  ];
}
