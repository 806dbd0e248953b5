/**
 * The lab's images with no registry: what the node imports into containerd (docs/lab.md, "Images
 * with no registry"). From elsewhere in lab/, import this file, not the ones behind it.
 */
export type { BuiltImage } from "./build";
export { imagesDir } from "./build";
export { ENGINE_BANNER, ENGINE_OPTIONS_ENV } from "./engine-plan";
export type { LabImages } from "./images";
export {
  buildLabImages,
  CONTAINERD_DEFAULT_SANDBOX_IMAGE,
  ENGINE_LABEL,
  ENGINE_LABEL_VALUE,
  LOCAL_PATH_HELPER_IMAGE,
  PAUSE_IMAGE,
  stackImages,
} from "./images";
export { CRI_NAMESPACE, importImages } from "./import";
