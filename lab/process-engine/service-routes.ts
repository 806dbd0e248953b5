import type * as k8s from "@kubernetes/client-node";
import { writeFileAtomic } from "../../common/atomic-write";
import type { ServiceEndpoints } from "../cluster";
import { LoopbackEndpoint } from "./loopback-endpoint";

/** A vLLM pod whose server runs now, and where on this machine it answers. */
export interface ServingPod {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Its server's loopback port. */
  readonly target: number;
  readonly startedAt: Date;
}

/** The label every vLLM pod carries; a Service that selects on it is one the lab serves. */
const VLLM_NAME_LABEL = ["app.kubernetes.io/name", "vllm"] as const;

/** Pure: the pod a Service forwards to: the most recently started serving pod its selector matches (of any namespace when undefined). */
export function podForSelector(
  selector: Readonly<Record<string, string>>,
  namespace: string | undefined,
  pods: Iterable<ServingPod>,
): ServingPod | undefined {
  let best: ServingPod | undefined;
  for (const pod of pods) {
    if (namespace !== undefined && pod.namespace !== namespace) continue;
    if (!Object.entries(selector).every(([k, v]) => pod.labels[k] === v)) continue;
    if (!best || pod.startedAt > best.startedAt) best = pod;
  }
  return best;
}

/** Pure: true for a Service the lab gives an endpoint: it selects vLLM pods. */
export function selectsVllmPods(service: k8s.V1Service): boolean {
  return service.spec?.selector?.[VLLM_NAME_LABEL[0]] === VLLM_NAME_LABEL[1];
}

interface ServiceListener {
  readonly uid: string;
  readonly endpoint: LoopbackEndpoint;
  readonly port: number;
}

/**
 * kube-proxy for the lab's vLLM Services, on loopback: each Service that selects vLLM pods gets a
 * 127.0.0.1 listener (its nodePort when it is a NodePort Service, as a node serves it; else a port
 * the OS picks, kept while the Service lives) that forwards to the pod it selects, so several
 * Deployments serve at once, each on its own endpoint. The lab's own endpoint (`endpointPort`,
 * the state's `endpoint`) keeps forwarding to the most recently started server, as with one pod.
 * Which port each Service got is written to the services file for the campaign and the tests.
 */
export class ServiceRoutes {
  private readonly main: LoopbackEndpoint;
  private mainPod: string | undefined;
  private readonly serving = new Map<string, ServingPod>();
  private readonly listeners = new Map<string, ServiceListener>();
  private written = "";

  constructor(
    endpointPort: number,
    private readonly file: string,
    private readonly warn: (message: string) => void,
  ) {
    this.main = new LoopbackEndpoint(endpointPort);
  }

  listen(): Promise<number> {
    return this.main.listen();
  }

  /** A pod's server started (or restarted) and answers at `pod.target`. */
  podServing(pod: ServingPod): void {
    this.serving.set(pod.uid, { ...pod });
    this.mainPod = pod.uid;
    this.main.route(pod.target);
  }

  /** A pod's server is gone or going: nothing is forwarded to it any more; the lab's endpoint falls back to the newest one left. */
  podStopped(uid: string): void {
    this.serving.delete(uid);
    if (this.mainPod !== uid) return;
    const next = podForSelector({}, undefined, this.serving.values());
    this.mainPod = next?.uid;
    this.main.route(next?.target);
  }

  /** Opens and closes listeners for the Services there are now, points each at its pod, and rewrites the file when it changed. */
  async sync(services: readonly k8s.V1Service[]): Promise<void> {
    const wanted = new Map<string, k8s.V1Service>();
    for (const s of services) if (selectsVllmPods(s)) wanted.set(`${s.metadata?.namespace}/${s.metadata?.name}`, s);
    for (const [key, l] of this.listeners) {
      const s = wanted.get(key);
      if (s && s.metadata?.uid === l.uid) continue;
      l.endpoint.close();
      this.listeners.delete(key);
    }
    const doc: ServiceEndpoints = { services: {} };
    for (const [key, s] of [...wanted].sort(([a], [b]) => a.localeCompare(b))) {
      const l = this.listeners.get(key) ?? (await this.open(key, s));
      if (!l) continue;
      const pod = podForSelector(s.spec?.selector ?? {}, s.metadata?.namespace ?? "", this.serving.values());
      l.endpoint.route(pod?.target);
      doc.services[key] = {
        url: `http://127.0.0.1:${l.port}`,
        pod: pod ? `${pod.namespace}/${pod.name}` : null,
        node: pod?.node ?? null,
      };
    }
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    if (text !== this.written) {
      writeFileAtomic(this.file, text);
      this.written = text;
    }
  }

  close(): void {
    this.main.close();
    for (const l of this.listeners.values()) l.endpoint.close();
  }

  private async open(key: string, service: k8s.V1Service): Promise<ServiceListener | undefined> {
    const nodePort = service.spec?.type === "NodePort" ? (service.spec.ports?.[0]?.nodePort ?? 0) : 0;
    for (const port of nodePort === 0 ? [0] : [nodePort, 0]) {
      const endpoint = new LoopbackEndpoint(port);
      try {
        const l = { uid: service.metadata?.uid ?? "", endpoint, port: await endpoint.listen() };
        this.listeners.set(key, l);
        return l;
      } catch (error) {
        endpoint.close();
        this.warn(`service ${key}: cannot listen on 127.0.0.1:${port} (${(error as Error).message})`);
      }
    }
    return undefined;
  }
}
