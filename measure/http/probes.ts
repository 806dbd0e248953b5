import { type ApiClient, errorMessageOf, TransportError, type TransportFailure } from "./client";

/**
 * `/health` and `/v1/models`, read once through the one vLLM client (so the API key, timeouts and
 * error wording are the same for the benchmark's identity phase, its pre-flight check and the
 * campaign's readiness wait and baseline verification). Probes never throw: they say what went wrong.
 */

interface HealthProbe {
  /** HTTP status, or null when no answer came. */
  readonly status: number | null;
  readonly elapsedMs: number | null;
  /** Why it is not 200: the server's message or the transport failure; null on 200. */
  readonly error: string | null;
  /** Set when no answer came: unreachable, timed out, aborted, or not HTTP. */
  readonly failure: TransportFailure | null;
}

export async function probeHealth(client: ApiClient, timeoutMs: number, signal?: AbortSignal): Promise<HealthProbe> {
  try {
    const r = await client.send("GET", "/health", undefined, timeoutMs, signal);
    return {
      status: r.status,
      elapsedMs: r.elapsedMs,
      error: r.status === 200 ? null : `HTTP ${r.status}: ${errorMessageOf(r.text).slice(0, 200)}`.trim(),
      failure: null,
    };
  } catch (err) {
    const failure = err instanceof TransportError ? err.kind : "protocol";
    return { status: null, elapsedMs: null, error: (err as Error).message, failure };
  }
}

/** One entry of `/v1/models`; vLLM adds `root` (the checkpoint) and `max_model_len`. */
interface ServedModelInfo {
  readonly id: string;
  readonly root: string | null;
  readonly maxModelLen: number | null;
}

/** Parses an OpenAI `/v1/models` body; null when it has no `data` list. Entries without an id are dropped. Pure. */
export function parseModels(body: unknown): ServedModelInfo[] | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  return data
    .filter(
      (m): m is { id: string; root?: unknown; max_model_len?: unknown } =>
        typeof (m as { id?: unknown })?.id === "string",
    )
    .map((m) => ({
      id: m.id,
      root: typeof m.root === "string" ? m.root : null,
      maxModelLen: typeof m.max_model_len === "number" ? m.max_model_len : null,
    }));
}

interface ModelsProbe {
  readonly models: ServedModelInfo[] | null;
  /** Why `models` is null: the status and server message (401 names VLLM_API_KEY), or the transport failure. */
  readonly error: string | null;
}

export async function probeModels(client: ApiClient, timeoutMs: number, signal?: AbortSignal): Promise<ModelsProbe> {
  try {
    const r = await client.send("GET", "/v1/models", undefined, timeoutMs, signal);
    if (r.status !== 200) {
      const hint = r.status === 401 ? " (the server wants an API key: set VLLM_API_KEY to the stack's apiKey)" : "";
      return { models: null, error: `HTTP ${r.status}: ${errorMessageOf(r.text).slice(0, 200)}${hint}` };
    }
    let body: unknown;
    try {
      body = JSON.parse(r.text);
    } catch {
      return { models: null, error: `not JSON: ${r.text.slice(0, 200)}` };
    }
    const models = parseModels(body);
    return models === null ? { models: null, error: "no data[] in the answer" } : { models, error: null };
  } catch (err) {
    return { models: null, error: (err as Error).message };
  }
}
