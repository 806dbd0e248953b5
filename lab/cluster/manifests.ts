import type {
  V1ContainerStateTerminated,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodStatus,
  V1StorageClass,
} from "@kubernetes/client-node";

export const PROVISIONER = "rancher.io/local-path";
/** The vLLM pods, whose status the lab's kubelet owns (kwok is told to leave them alone). */
export const VLLM_POD_SELECTOR = "app.kubernetes.io/name=vllm";

/**
 * The node-local indexes of the GPUs the lab's kubelet gave a vLLM pod ("0", or "0,1" for two), set
 * on the pod before its server starts: with the pod's `spec.nodeName`, which device of which node
 * served it (a real device plugin puts this in the container's NVIDIA_VISIBLE_DEVICES instead).
 */
export const GPU_DEVICES_ANNOTATION = "lab.vllm-tuner/gpu-devices";

/** What the seed's k3s node carried of its GPU (the NVIDIA device plugin's feature labels); the lab's nodes carry it too. */
export const GPU_NODE_LABELS = {
  "nvidia.com/gpu.present": "true",
  "nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090",
} as const;

/**
 * What the seed's GPU machine gives pods besides its GPUs: its CPUs, memory, pod slots and disk.
 * kwok's node advertises it as it is; the real node's kubelet is shown this machine (lab/node/machine.ts).
 */
export const SEED_NODE_RESOURCES = {
  cpu: "16",
  memory: "64Gi",
  pods: "110",
  "ephemeral-storage": "500Gi",
} as const;

/**
 * A kwok GPU node (the process engine's): what k3s on the seed's machine advertises, including `gpus`
 * `nvidia.com/gpu` (the device plugin's resource; the seed's node had one), so the scheduler
 * leaves a vLLM pod Pending when every GPU of every node is taken.
 */
export function labNode(name: string, gpus = 1): V1Node {
  const resources = { ...SEED_NODE_RESOURCES, "nvidia.com/gpu": String(gpus) };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      // kwok manages (heartbeats) nodes carrying this annotation.
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        ...GPU_NODE_LABELS,
        type: "kwok",
      },
    },
    spec: {},
    status: { capacity: resources, allocatable: resources },
  };
}

/** k3s's default storage class: node-local volumes bound when the first pod is scheduled. */
export function localPathStorageClass(): V1StorageClass {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: "local-path", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
    provisioner: PROVISIONER,
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
  };
}

/** The PV local-path-provisioner would create for a claim, pinned to the node the scheduler chose. */
export function provisionedVolume(claim: V1PersistentVolumeClaim, node: string): V1PersistentVolume {
  const ns = claim.metadata?.namespace ?? "default";
  const name = `pvc-${claim.metadata?.uid}`;
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name, annotations: { "pv.kubernetes.io/provisioned-by": PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? "1Gi" },
      accessModes: claim.spec?.accessModes ?? ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: claim.spec?.storageClassName ?? "local-path",
      claimRef: {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        namespace: ns,
        name: claim.metadata?.name,
        uid: claim.metadata?.uid,
      },
      hostPath: {
        path: `/var/lib/rancher/k3s/storage/${name}_${ns}_${claim.metadata?.name}`,
        type: "DirectoryOrCreate",
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [node] }] },
          ],
        },
      },
    },
  };
}

type PodPhaseStep = "started" | "ready" | "crashed";

/**
 * The status a kubelet would report for a single-container pod at each step. `startedAt` is when
 * the container (re)started; `restarts` counts restarts after a crash; `lastTerminated` is how the
 * previous run ended (`lastState.terminated`) and `waitingMessage` the back-off's message.
 */
export function podStatusAt(
  pod: V1Pod,
  step: PodPhaseStep,
  at: {
    startedAt: Date;
    now: Date;
    restarts: number;
    podIP: string;
    hostIP: string;
    lastTerminated?: V1ContainerStateTerminated;
    waitingMessage?: string;
  },
): V1PodStatus {
  const ready = step === "ready";
  const condition = (type: string, status: boolean, time: Date) => ({
    type,
    status: status ? "True" : "False",
    lastTransitionTime: time,
  });
  const scheduledAt =
    pod.status?.conditions?.find((c) => c.type === "PodScheduled")?.lastTransitionTime ?? at.startedAt;
  const containers = (pod.spec?.containers ?? []).map((c) => ({
    name: c.name,
    image: c.image ?? "",
    imageID: `lab://${c.image}`,
    containerID: `lab://${pod.metadata?.uid}/${c.name}/${at.restarts}`,
    ready,
    started: step !== "crashed",
    restartCount: at.restarts,
    state:
      step === "crashed"
        ? { waiting: { reason: "CrashLoopBackOff", message: at.waitingMessage ?? "vllm serve exited" } }
        : { running: { startedAt: at.startedAt } },
    ...(at.lastTerminated ? { lastState: { terminated: at.lastTerminated } } : {}),
  }));
  return {
    phase: "Running",
    hostIP: at.hostIP,
    hostIPs: [{ ip: at.hostIP }],
    podIP: at.podIP,
    podIPs: [{ ip: at.podIP }],
    startTime: pod.status?.startTime ?? at.startedAt,
    qosClass: pod.status?.qosClass ?? "Burstable",
    conditions: [
      condition("PodScheduled", true, new Date(scheduledAt)),
      condition("Initialized", true, at.startedAt),
      condition("ContainersReady", ready, at.now),
      condition("Ready", ready, at.now),
    ],
    containerStatuses: containers,
  };
}
