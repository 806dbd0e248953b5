import { z } from "zod";

/** Where a campaign measured: lab, a simulated GPU and vLLM (or the lab's real engine); cluster, a real one. */
export const ModeSchema = z.enum(["lab", "cluster"]);
export type Mode = z.infer<typeof ModeSchema>;
