import { execFileSync } from "node:child_process";
import * as path from "node:path";

/**
 * A kubeconfig user's `exec` credential plugin run as client-go runs it (EKS' `aws eks get-token`,
 * GKE's `gke-gcloud-auth-plugin`, AKS' `kubelogin`): the command with its args and env, told by
 * KUBERNETES_EXEC_INFO that no one is there to answer a prompt, and its ExecCredential's status read
 * from stdout. Client-go's rule for the command: a relative path with a separator starts at the
 * kubeconfig's directory; a bare name is looked up on PATH.
 */

/** What the plugin gave: a bearer token, or a client certificate and key. */
export interface ExecCredential {
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** A plugin gets this long; a login prompt it cannot show would otherwise hang the `up`. */
const PLUGIN_TIMEOUT_MS = 60_000;

const text = (o: Record<string, unknown>, key: string): string | undefined =>
  typeof o[key] === "string" && o[key] !== "" ? (o[key] as string) : undefined;

export function runExecCredential(exec: Record<string, unknown>, who: string, dir: string): ExecCredential {
  const command = text(exec, "command");
  if (command === undefined) throw new Error(`${who} has an exec plugin with no command`);
  const resolved = command.includes("/") && !path.isAbsolute(command) ? path.resolve(dir, command) : command;
  const args = Array.isArray(exec["args"]) ? (exec["args"] as unknown[]).map(String) : [];
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  for (const e of Array.isArray(exec["env"]) ? (exec["env"] as { name?: unknown; value?: unknown }[]) : [])
    if (typeof e?.name === "string") env[e.name] = String(e.value ?? "");
  const apiVersion = text(exec, "apiVersion") ?? "client.authentication.k8s.io/v1";
  env["KUBERNETES_EXEC_INFO"] = JSON.stringify({ apiVersion, kind: "ExecCredential", spec: { interactive: false } });
  let stdout: string;
  try {
    stdout = execFileSync(resolved, args, {
      env,
      encoding: "utf8",
      timeout: PLUGIN_TIMEOUT_MS,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message?: string };
    const hint = text(exec, "installHint");
    const why =
      e.code === "ENOENT"
        ? `${command} is not on PATH${hint ? ` (${hint.trim()})` : ""}`
        : (e.stderr ?? "").trim().split("\n").pop() || e.message || String(err);
    throw new Error(`${who}: its exec plugin ${command} failed: ${why}`);
  }
  let status: Record<string, unknown>;
  try {
    status = ((JSON.parse(stdout) as Record<string, unknown>)["status"] ?? {}) as Record<string, unknown>;
  } catch {
    throw new Error(`${who}: its exec plugin ${command} did not print an ExecCredential (JSON expected on stdout)`);
  }
  const credential = {
    token: text(status, "token"),
    cert: text(status, "clientCertificateData"),
    key: text(status, "clientKeyData"),
  };
  if (credential.token === undefined && (credential.cert === undefined || credential.key === undefined))
    throw new Error(`${who}: its exec plugin ${command} gave neither a token nor a client certificate and key`);
  return credential;
}
