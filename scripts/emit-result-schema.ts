import { join } from "node:path";
import { writeFileAtomic } from "../common/atomic-write";
import { RESULT_JSON_SCHEMA_PATH, resultJsonSchemaText } from "../result/json-schema";

/** Regenerates the checked-in JSON Schema of the result file from its zod schema. */
const path = join(__dirname, "..", RESULT_JSON_SCHEMA_PATH);
writeFileAtomic(path, resultJsonSchemaText());
process.stdout.write(`wrote ${path}\n`);
