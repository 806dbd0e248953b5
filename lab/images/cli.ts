/**
 * `npm run lab:images`: builds the lab's pause and engine images (or finds them unchanged) and
 * prints each tarball with its names, one JSON object. The engine image carries the lab's default
 * options; the lab builds it with its own (buildLabImages).
 */
import { LabOptionsSchema } from "../cluster";
import { buildLabImages } from "./images";

try {
  const images = buildLabImages(LabOptionsSchema.parse({}));
  process.stdout.write(`${JSON.stringify(images, null, 2)}\n`);
} catch (error) {
  process.stderr.write(`lab:images: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
