/**
 * `npm run lab:images`: builds the lab's pause and engine images (or finds them unchanged) and
 * prints each tarball with its names, one JSON object. The engine image carries the lab's default
 * options; `lab up` builds it with its own.
 */
import { LabOptionsSchema } from "../options";
import { buildLabImages } from "./images";

const images = buildLabImages(LabOptionsSchema.parse({}));
process.stdout.write(`${JSON.stringify(images, null, 2)}\n`);
