import { strict as assert } from "node:assert";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { renderObjects } from "../../../review/objects";
import { PROJECT_DIR, runProgram } from "../helpers/program";

const TYPES = {
  Deployment: "kubernetes:apps/v1:Deployment",
  PersistentVolumeClaim: "kubernetes:core/v1:PersistentVolumeClaim",
  Service: "kubernetes:core/v1:Service",
} as const;

/** JSON round trip: the engine's inputs carry no undefined fields. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

describe("review: the objects it renders are the program's (Pulumi mocks)", () => {
  for (const stack of ["baseline", "seqs1", "cold"]) {
    it(`${stack}: every Deployment, claim and Service the review renders is registered with the same metadata and spec`, async () => {
      const run = await runProgram(stack);
      const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
      assert.ok(parsed.ok, `${stack} parses`);
      const secrets = {
        hfToken: run.resources.some((r) => r.name === "vllm-hf-token"),
        apiKey: run.resources.some((r) => r.name === "vllm-api-key"),
      };
      const rendered = renderObjects(parsed.config, stack, secrets);
      const registered = run.resources.filter((r) => Object.values(TYPES).includes(r.type as never));
      assert.equal(rendered.length, registered.length, "one rendered object per registered one");
      for (const o of rendered) {
        const [namespace, name] = o.id.split("/");
        const match = registered.filter(
          (r) =>
            r.type === TYPES[o.kind] &&
            r.inputs["metadata"]?.name === name &&
            r.inputs["metadata"]?.namespace === namespace,
        );
        assert.equal(match.length, 1, `${o.kind} ${o.id} registered once`);
        const r = match[0]!;
        assert.deepEqual(
          { metadata: r.inputs["metadata"], spec: r.inputs["spec"] },
          plain(o.body),
          `${o.kind} ${o.id}`,
        );
      }
    });
  }
});
