import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
import { runExecCredential } from "./exec-credential";

/**
 * The kubeconfig read by hand for the program's cluster check and `up`'s wait, so that neither loads
 * `@kubernetes/client-node` (3-5 s of module load on every `up`, docs/switch-cost.md). It reads what
 * the Kubernetes provider would: `kubernetes:kubeconfig` (a path or the contents), else KUBECONFIG
 * (a list of files, merged: the first file to define a name wins), else ~/.kube/config, else the
 * pod's service account. It supports what k3s, kind, kwok and service accounts write: a CA (data
 * or file) or `insecure-skip-tls-verify`, and a client certificate and key (data or file), a bearer
 * token (or token file), basic auth, or an exec credential plugin (EKS, GKE, AKS; exec-credential.ts).
 * Auth providers (removed from client-go in 1.26) and proxies are refused by name.
 */

/** Where and how to reach the API server: everything `node:https` needs. */
export interface KubeTarget {
  readonly context: string;
  readonly server: string;
  readonly ca?: string;
  readonly insecure: boolean;
  readonly tlsServerName?: string;
  readonly cert?: string;
  readonly key?: string;
  /** An `Authorization` header value: `Bearer ...` or `Basic ...`. */
  readonly authorization?: string;
}

interface Named {
  readonly name: string;
  readonly [field: string]: unknown;
}

/** The parsed kubeconfig: its named entries, the current context, and the directory relative file names start from. */
export interface KubeConfigFile {
  readonly contexts: readonly Named[];
  readonly clusters: readonly Named[];
  readonly users: readonly Named[];
  readonly currentContext: string;
  /** Per entry name, the directory of the file that defined it (relative paths in it start there). */
  readonly dirOf: ReadonlyMap<string, string>;
}

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const IN_CLUSTER = "inCluster";

const list = (doc: Record<string, unknown>, key: string): Named[] =>
  Array.isArray(doc[key]) ? (doc[key] as Named[]).filter((e) => typeof e?.name === "string") : [];

/** Merges kubeconfig documents in order, as kubectl does: the first definition of a name wins. Pure. */
export function mergeKubeConfigs(docs: readonly { text: string; dir: string }[]): KubeConfigFile {
  const out = { contexts: [] as Named[], clusters: [] as Named[], users: [] as Named[] };
  const dirOf = new Map<string, string>();
  let currentContext = "";
  for (const { text, dir } of docs) {
    const doc = (parse(text) ?? {}) as Record<string, unknown>;
    if (typeof doc !== "object") throw new Error("not a kubeconfig (YAML mapping expected)");
    for (const key of ["contexts", "clusters", "users"] as const) {
      for (const entry of list(doc, key)) {
        if (out[key].some((e) => e.name === entry.name)) continue;
        out[key].push(entry);
        dirOf.set(`${key}/${entry.name}`, dir);
      }
    }
    const current = doc["current-context"];
    if (currentContext === "" && typeof current === "string") currentContext = current;
  }
  return { ...out, currentContext, dirOf };
}

/** The service account's own config, when the program runs in a pod. */
function inClusterConfig(): KubeConfigFile | undefined {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  if (!host || !fs.existsSync(path.join(SERVICE_ACCOUNT_DIR, "token"))) return undefined;
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${process.env.KUBERNETES_SERVICE_PORT ?? "443"}`;
  const entry = (name: string, field: string, value: object): Named => ({ name, [field]: value });
  return {
    contexts: [entry(IN_CLUSTER, "context", { cluster: IN_CLUSTER, user: IN_CLUSTER })],
    clusters: [entry(IN_CLUSTER, "cluster", { server, "certificate-authority": "ca.crt" })],
    users: [entry(IN_CLUSTER, "user", { tokenFile: "token" })],
    currentContext: IN_CLUSTER,
    dirOf: new Map([
      [`clusters/${IN_CLUSTER}`, SERVICE_ACCOUNT_DIR],
      [`users/${IN_CLUSTER}`, SERVICE_ACCOUNT_DIR],
    ]),
  };
}

/** The kubeconfig the Kubernetes provider would use (see above); throws with what it tried. */
export function loadKubeConfig(given: string | undefined): KubeConfigFile {
  if (given !== undefined) {
    if (!given.includes("\n") && fs.existsSync(given))
      return mergeKubeConfigs([{ text: fs.readFileSync(given, "utf8"), dir: path.dirname(path.resolve(given)) }]);
    return mergeKubeConfigs([{ text: given, dir: process.cwd() }]);
  }
  const files = (process.env.KUBECONFIG ?? "").split(path.delimiter).filter((f) => f !== "");
  const existing = files.filter((f) => fs.existsSync(f));
  if (files.length > 0 && existing.length === 0)
    throw new Error(`no file of KUBECONFIG=${process.env.KUBECONFIG} exists`);
  const home = path.join(os.homedir(), ".kube", "config");
  const chosen = existing.length > 0 ? existing : fs.existsSync(home) ? [home] : [];
  if (chosen.length > 0)
    return mergeKubeConfigs(
      chosen.map((f) => ({ text: fs.readFileSync(f, "utf8"), dir: path.dirname(path.resolve(f)) })),
    );
  const inCluster = inClusterConfig();
  if (inCluster) return inCluster;
  throw new Error(`no kubeconfig: set KUBECONFIG or kubernetes:kubeconfig, or write ${home}`);
}

const field = (entry: Named | undefined, key: string): Record<string, unknown> =>
  (entry?.[key] ?? {}) as Record<string, unknown>;
const str = (o: Record<string, unknown>, key: string): string | undefined =>
  typeof o[key] === "string" && o[key] !== "" ? (o[key] as string) : undefined;

/** A `-data` field (base64) or its file twin (relative to the kubeconfig's directory), as text. */
function material(o: Record<string, unknown>, key: string, dir: string): string | undefined {
  const data = str(o, `${key}-data`);
  if (data !== undefined) return Buffer.from(data, "base64").toString("utf8");
  const file = str(o, key);
  return file === undefined ? undefined : fs.readFileSync(path.resolve(dir, file), "utf8");
}

/** The names of the kubeconfig's contexts. */
export const contextNames = (kc: KubeConfigFile): string[] => kc.contexts.map((c) => c.name);

/**
 * Resolves a context (the current one when `context` is undefined) to its server and credentials;
 * throws naming what is missing or what this client does not support.
 */
export function kubeTarget(kc: KubeConfigFile, context: string | undefined): KubeTarget {
  const name = context ?? kc.currentContext;
  if (name === "") throw new Error("the kubeconfig has no current-context and none was given");
  const ctx = kc.contexts.find((c) => c.name === name);
  if (!ctx) throw new Error(`the kubeconfig has no context ${name}`);
  const ref = field(ctx, "context");
  const clusterName = str(ref, "cluster");
  const userName = str(ref, "user");
  const clusterEntry = kc.clusters.find((c) => c.name === clusterName);
  if (!clusterEntry)
    throw new Error(`context ${name} names cluster ${clusterName ?? "(none)"}, which the kubeconfig lacks`);
  const cluster = field(clusterEntry, "cluster");
  const server = str(cluster, "server");
  if (server === undefined) throw new Error(`cluster ${clusterName} has no server`);
  if (str(cluster, "proxy-url") !== undefined)
    throw new Error(`cluster ${clusterName} sets proxy-url, which the program's cluster client does not support`);
  const clusterDir = kc.dirOf.get(`clusters/${clusterName}`) ?? process.cwd();
  const userEntry = kc.users.find((u) => u.name === userName);
  const user = field(userEntry, "user");
  const userDir = kc.dirOf.get(`users/${userName}`) ?? process.cwd();
  if (user["auth-provider"] !== undefined)
    throw new Error(
      `user ${userName} of context ${name} authenticates with auth-provider, which the program's cluster client` +
        " does not support (client-go dropped it in 1.26): use a context whose user has an exec plugin, a client" +
        " certificate, a token or a tokenFile",
    );
  const exec =
    user["exec"] === undefined
      ? {}
      : runExecCredential(user["exec"] as Record<string, unknown>, `user ${userName} of context ${name}`, userDir);
  const tokenFile = str(user, "tokenFile");
  const token =
    exec.token ??
    str(user, "token") ??
    (tokenFile ? fs.readFileSync(path.resolve(userDir, tokenFile), "utf8").trim() : undefined);
  const username = str(user, "username");
  const basic =
    username !== undefined ? Buffer.from(`${username}:${str(user, "password") ?? ""}`).toString("base64") : undefined;
  return {
    context: name,
    server: server.replace(/\/+$/, ""),
    ca: material(cluster, "certificate-authority", clusterDir),
    insecure: cluster["insecure-skip-tls-verify"] === true,
    tlsServerName: str(cluster, "tls-server-name"),
    cert: exec.cert ?? material(user, "client-certificate", userDir),
    key: exec.key ?? material(user, "client-key", userDir),
    authorization: token !== undefined ? `Bearer ${token}` : basic !== undefined ? `Basic ${basic}` : undefined,
  };
}
