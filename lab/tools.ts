import * as fs from "node:fs";
import * as path from "node:path";
import { toolchainBin } from "./options";

/** The lab's binaries: the user's own on PATH win, else the ones lab/toolchain/build.sh built. */
export function findTool(name: string): string {
  const built = path.join(toolchainBin(), name);
  if (fs.existsSync(built)) return built;
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir !== "" && fs.existsSync(candidate)) return candidate;
  }
  throw new Error(
    `${name} not found in ${toolchainBin()} or on PATH; build the toolchain with: bash lab/toolchain/build.sh`,
  );
}
