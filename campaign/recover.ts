import type { Mode } from "./pulumi";

/** Where a campaign ran Pulumi: what a by-hand restore needs to reach the same stacks. */
export interface RecoveryTarget {
  readonly workDir: string;
  /** undefined: the user's own `pulumi login`. */
  readonly backend: string | undefined | null;
  readonly kubeconfig: string | undefined | null;
  readonly mode: Mode;
  /** The CLI the campaign ran (the lab's is not on PATH); default `pulumi`. */
  readonly pulumi?: string | undefined;
}

/**
 * The command that puts baseline back by hand, runnable as printed: the backend, kubeconfig and work
 * directory this campaign used (the lab's are not the user's defaults) and, in the lab, its empty
 * passphrase. `campaign recover` does the same and also clears a stale lock first.
 */
export function recoveryCommand(settings: RecoveryTarget): string {
  const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const env = [
    ...(settings.backend != null ? [`PULUMI_BACKEND_URL=${q(settings.backend)}`] : []),
    ...(settings.kubeconfig != null ? [`KUBECONFIG=${q(settings.kubeconfig)}`] : []),
    ...(settings.mode === "lab" ? ["PULUMI_CONFIG_PASSPHRASE="] : []),
  ];
  const command = [...env, q(settings.pulumi ?? "pulumi"), "up --stack baseline --yes"].join(" ");
  return `(cd ${q(settings.workDir)} && ${command})`;
}

