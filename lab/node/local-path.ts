import type { V1ConfigMap, V1Namespace } from "@kubernetes/client-node";
import { PROVISIONER } from "../cluster";
import { LOCAL_PATH_HELPER_IMAGE } from "../images";
import type { NodeLayout } from "./layout";

/**
 * rancher's local-path-provisioner on the real node (pure): the objects and arguments it runs
 * with, as its own deploy manifest (deploy/local-path-storage.yaml of v0.0.33) sets them up,
 * but out of the cluster with the lab's kubeconfig (as the lab runs kwok), its claims' folders
 * under the node's dir, and its helper pods running the lab's busybox image.
 */

/** Upstream's namespace and ConfigMap names: helper pods run there and mount the scripts from it. */
export const LOCAL_PATH_NAMESPACE = "local-path-storage";
export const LOCAL_PATH_CONFIGMAP = "local-path-config";

/** Upstream's setup and teardown scripts, as its deploy manifest has them. */
const SETUP = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"';
const TEARDOWN = '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"';

export function localPathNamespace(): V1Namespace {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name: LOCAL_PATH_NAMESPACE } };
}

/**
 * The provisioner's ConfigMap: every node's claims in folders under `layout.localPath` (one path
 * for the node's mount namespace, the kubelet's hostPath and this machine alike), upstream's
 * scripts, and its helper pod with the lab's image (the provisioner takes the image from here;
 * its --helper-image flag is required but unused) and no API token (the scripts need none).
 */
export function localPathConfigMap(layout: NodeLayout): V1ConfigMap {
  const config = { nodePathMap: [{ node: "DEFAULT_PATH_FOR_NON_LISTED_NODES", paths: [layout.localPath] }] };
  const helperPod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "helper-pod" },
    spec: {
      priorityClassName: "system-node-critical",
      automountServiceAccountToken: false,
      tolerations: [{ key: "node.kubernetes.io/disk-pressure", operator: "Exists", effect: "NoSchedule" }],
      containers: [{ name: "helper-pod", image: LOCAL_PATH_HELPER_IMAGE, imagePullPolicy: "IfNotPresent" }],
    },
  };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: LOCAL_PATH_CONFIGMAP, namespace: LOCAL_PATH_NAMESPACE },
    data: {
      "config.json": JSON.stringify(config, null, 2),
      setup: SETUP,
      teardown: TEARDOWN,
      // JSON is YAML.
      "helperPod.yaml": JSON.stringify(helperPod, null, 2),
    },
  };
}

/** `local-path-provisioner` arguments: the name the lab's `local-path` StorageClass asks for, the objects above. */
export function localPathArgs(kubeconfig: string): string[] {
  return [
    "--debug",
    "start",
    `--provisioner-name=${PROVISIONER}`,
    `--namespace=${LOCAL_PATH_NAMESPACE}`,
    `--configmap-name=${LOCAL_PATH_CONFIGMAP}`,
    `--helper-image=${LOCAL_PATH_HELPER_IMAGE}`,
    "--service-account-name=default",
    `--kubeconfig=${kubeconfig}`,
  ];
}
