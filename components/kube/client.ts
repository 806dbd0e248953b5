import * as http from "node:http";
import * as https from "node:https";
import type { KubeTarget } from "./kubeconfig";

/**
 * Reads from the API server over `node:http(s)` with a kubeconfig's credentials: the program's
 * cluster check and `up`'s wait need a few GETs, not `@kubernetes/client-node`'s 3-5 s of module
 * load (docs/switch-cost.md). Plain functions, no classes: `up`'s wait runs inside a Pulumi dynamic
 * provider, whose code Pulumi serializes with everything it captures.
 */

/** Something that GETs a path of the API and returns the parsed JSON body. */
export type KubeGet = <T>(apiPath: string, query?: Record<string, string | number | undefined>) => Promise<T>;

/** One line of an API error: the Status's message when the server sent one. Pure. */
export function apiErrorMessage(status: number | undefined, body: string): string {
  let message = body.trim().split("\n")[0] ?? "";
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") message = parsed.message;
  } catch {
    // Not JSON (a proxy's page, an empty body): the first line as it came.
  }
  return `HTTP ${status ?? "?"}${message ? `: ${message.slice(0, 300)}` : ""}`;
}

/** The request URL: the server's base path kept, query values left out when undefined. Pure. */
export function apiUrl(server: string, apiPath: string, query: Record<string, string | number | undefined> = {}): URL {
  const url = new URL(`${server.replace(/\/+$/, "")}${apiPath}`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

function connection(target: KubeTarget) {
  const secure = target.server.startsWith("https:");
  const agent = secure
    ? new https.Agent({
        keepAlive: true,
        ca: target.ca,
        cert: target.cert,
        key: target.key,
        rejectUnauthorized: !target.insecure,
        servername: target.tlsServerName,
      })
    : new http.Agent({ keepAlive: true });
  const headers: Record<string, string> = { Accept: "application/json" };
  if (target.authorization !== undefined) headers.Authorization = target.authorization;
  return { lib: secure ? https : http, agent, headers };
}

/**
 * A GET function for the target, keeping its connection open between calls (the wait polls every
 * second; Node unrefs an idle kept-alive socket, so it holds no process open). Each request gives
 * up after `timeoutMs`; a non-2xx answer throws with the API's message.
 */
export function kubeClient(target: KubeTarget, timeoutMs: number): KubeGet {
  const { lib, agent, headers } = connection(target);
  return <T>(apiPath: string, query?: Record<string, string | number | undefined>) =>
    new Promise<T>((resolve, reject) => {
      const url = apiUrl(target.server, apiPath, query);
      const request = lib.get(url, { agent, headers, timeout: timeoutMs }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("error", reject);
        response.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          const status = response.statusCode ?? 0;
          if (status < 200 || status > 299)
            return reject(new Error(`GET ${url.pathname}: ${apiErrorMessage(status, body)}`));
          try {
            resolve(JSON.parse(body) as T);
          } catch (error) {
            reject(new Error(`GET ${url.pathname}: not JSON (${(error as Error).message})`));
          }
        });
      });
      request.on("timeout", () => request.destroy(new Error(`GET ${url.pathname}: no answer in ${timeoutMs} ms`)));
      request.on("error", reject);
    });
}

/**
 * Waits until a watch of the list at `apiPath` (from `resourceVersion`) reports a change, or at most
 * `maxMs`, or until `signal` fires: a poll loop's sleep that ends as soon as there is something new
 * to read (a pod turning Ready), where a fixed sleep would add up to its whole length to every wait.
 * Never throws: a watch that fails just ends the sleep early or at `maxMs`.
 */
export function kubeChange(
  target: KubeTarget,
): (apiPath: string, query: Record<string, string | undefined>, maxMs: number, signal: AbortSignal) => Promise<void> {
  // Its own agent: a watch holds its connection for up to `maxMs`.
  const { lib, agent, headers } = connection(target);
  return (apiPath, query, maxMs, signal) =>
    new Promise<void>((resolve) => {
      const url = apiUrl(target.server, apiPath, {
        ...query,
        watch: "1",
        allowWatchBookmarks: "false",
        timeoutSeconds: String(Math.max(1, Math.ceil(maxMs / 1000))),
      });
      // Declared before `done` uses them: Pulumi's function serialization (this runs in a dynamic
      // provider) rejects a closure over a variable declared after it.
      let request: http.ClientRequest | undefined;
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        request?.destroy();
        resolve();
      };
      timer = setTimeout(done, maxMs);
      if (signal.aborted) return done();
      signal.addEventListener("abort", done);
      request = lib.get(url, { agent, headers }, (response) => {
        response.once("data", done);
        response.on("end", done);
        response.on("error", done);
      });
      request.on("error", done);
    });
}
