import { createHash } from "node:crypto";

/**
 * Pure: an OCI image layout (image-spec v1.1, "image-layout.md") of one single-layer linux/amd64
 * image, as `ctr images import` reads it: `oci-layout`, `index.json`, and the blobs (config,
 * manifest, layer) under `blobs/sha256/`. The layer is an uncompressed tar, so its digest is also
 * its diff id. Nothing here reads a clock: the same inputs give the same bytes and digests.
 */

const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar",
} as const;

/** The OCI annotation for a tag within a layout, and containerd's for the image's full name (what import names it). */
export const REF_NAME_ANNOTATION = "org.opencontainers.image.ref.name";
export const CONTAINERD_NAME_ANNOTATION = "io.containerd.image.name";

/** The layout's marker file (image-layout.md). */
export const OCI_LAYOUT_FILE = `${JSON.stringify({ imageLayoutVersion: "1.0.0" })}\n`;

/** Every layer and config says this epoch, so a rebuild from the same inputs is byte-identical. */
const CREATED = "1970-01-01T00:00:00Z";

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

/** What a lab image is, apart from its one layer. */
export interface ImageSpec {
  /** Full references, `registry/repository:tag`; the first is its own name, the rest aliases of the same manifest. */
  readonly names: readonly string[];
  readonly entrypoint: readonly string[];
  readonly env: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  /** `uid:gid`; absent runs as root. */
  readonly user?: string;
  readonly exposedPorts?: readonly number[];
}

/** A blob rendered here: its bytes and the descriptor naming them. */
export interface Blob {
  readonly descriptor: Descriptor;
  readonly bytes: Buffer;
}

export function sha256Digest(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function jsonBlob(mediaType: string, value: unknown): Blob {
  const bytes = Buffer.from(JSON.stringify(value));
  return { descriptor: { mediaType, digest: sha256Digest(bytes), size: bytes.length }, bytes };
}

/** The tag of a reference: `registry.k8s.io/pause:3.10.1` -> `3.10.1`. */
export function tagOf(reference: string): string {
  const slash = reference.lastIndexOf("/");
  const colon = reference.lastIndexOf(":");
  if (colon <= slash) throw new Error(`image reference ${reference}: expected registry/repository:tag`);
  return reference.slice(colon + 1);
}

export function renderConfig(spec: ImageSpec, layerDigest: string): Blob {
  return jsonBlob(MEDIA.config, {
    created: CREATED,
    architecture: "amd64",
    os: "linux",
    config: {
      Entrypoint: [...spec.entrypoint],
      Env: [...spec.env],
      Labels: { ...spec.labels },
      ...(spec.user ? { User: spec.user } : {}),
      ...(spec.exposedPorts?.length
        ? { ExposedPorts: Object.fromEntries(spec.exposedPorts.map((p) => [`${p}/tcp`, {}])) }
        : {}),
    },
    rootfs: { type: "layers", diff_ids: [layerDigest] },
    history: [{ created: CREATED, created_by: "vllm-tuner lab/images (no Dockerfile: a hand-written OCI layout)" }],
  });
}

export function renderManifest(config: Descriptor, layer: Descriptor, labels: Readonly<Record<string, string>>): Blob {
  return jsonBlob(MEDIA.manifest, {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config,
    layers: [layer],
    // The labels again as the manifest's annotations, so `ctr images ls` / a registry browser shows them too.
    annotations: { ...labels },
  });
}

/** index.json: the manifest once per name, each with the annotation containerd names the imported image by. */
export function renderIndex(manifest: Descriptor, names: readonly string[]): Buffer {
  if (names.length === 0) throw new Error("an image needs at least one name");
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: names.map((name) => ({
        ...manifest,
        platform: { architecture: "amd64", os: "linux" },
        annotations: { [CONTAINERD_NAME_ANNOTATION]: name, [REF_NAME_ANNOTATION]: tagOf(name) },
      })),
    }),
  );
}

/** The whole layout but the layer's bytes: what to write under `blobs/sha256/` beside the layer, and index.json. */
export function renderLayout(spec: ImageSpec, layer: { readonly digest: string; readonly size: number }) {
  const layerDescriptor: Descriptor = { mediaType: MEDIA.layer, digest: layer.digest, size: layer.size };
  const config = renderConfig(spec, layer.digest);
  const manifest = renderManifest(config.descriptor, layerDescriptor, spec.labels);
  return { blobs: [config, manifest], index: renderIndex(manifest.descriptor, spec.names), manifest, config };
}

/**
 * The full name containerd's CRI looks an image up by (Docker's normalization, as `kubectl` shows it
 * after a pull): a name with no registry gets `docker.io/`, a single-component one `docker.io/library/`,
 * one with neither tag nor digest `:latest`. `ctr images import` names an image exactly as told, so
 * an image imported as `vllm/vllm-openai:v0.24.0` alone would not be found for a pod of that image.
 */
export function normalizedImageName(ref: string): string {
  const slash = ref.indexOf("/");
  const first = slash < 0 ? "" : ref.slice(0, slash);
  const hasRegistry = first.includes(".") || first.includes(":") || first === "localhost";
  const named = hasRegistry ? ref : slash < 0 ? `docker.io/library/${ref}` : `docker.io/${ref}`;
  const lastPart = named.slice(named.lastIndexOf("/") + 1);
  return lastPart.includes(":") || named.includes("@") ? named : `${named}:latest`;
}
