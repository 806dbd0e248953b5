import { join } from "node:path";
import { RESULT_JSON_SCHEMA_PATH, resultJsonSchemaText } from "../benchmarks/result/json-schema";
import { writeFileAtomic } from "../common/atomic-write";

/** Regenerates the checked-in JSON Schema of the result file from its zod schema. */
const path = join(__dirname, "..", RESULT_JSON_SCHEMA_PATH);
writeFileAtomic(path, resultJsonSchemaText());
process.stdout.write(`wrote ${path}\n`);
