import { twinSloOf } from "../../../benchmarks";
import { DEFAULT_SLO_ATTAINMENT, parseSloBounds } from "../../../measure/inputs/slo";
import type { TwinSlo } from "../../../twin/types";

/** The SLO the README's goodput tune states, as a user types it. */
export const DEFAULT_SLO_FLAG = "ttft:p99:1000,tpot:p99:30";

/** That SLO as the twin judges a request: through the product's own parser and `twinSloOf`, not a second literal. */
export const DEFAULT_TWIN_SLO: TwinSlo = (() => {
  const twin = twinSloOf({ bounds: parseSloBounds(DEFAULT_SLO_FLAG), attainment: DEFAULT_SLO_ATTAINMENT });
  if (!("slo" in twin)) throw new Error(`the default SLO is not the twin's: ${twin.why}`);
  return twin.slo;
})();
