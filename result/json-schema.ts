import { z } from "zod";
import { BenchmarkResultSchema, SCHEMA_VERSION } from "./schema";

/** Where the emitted JSON Schema is checked in, relative to the repository root. */
export const RESULT_JSON_SCHEMA_PATH = "schemas/result.schema.json";

/** Pure: the result file's JSON Schema as the text checked in (the output side: defaults applied). */
export function resultJsonSchemaText(): string {
  // Shared parts (Measured, Summary, PodIdentity) become $defs instead of being repeated.
  const schema = z.toJSONSchema(BenchmarkResultSchema, { io: "output", target: "draft-2020-12", reused: "ref" });
  const doc = { ...schema, title: `vllm-tuner benchmark result, schemaVersion ${SCHEMA_VERSION}` };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
