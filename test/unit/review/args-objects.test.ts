import { strict as assert } from "node:assert";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { argChanges, argUnits, diffArgUnits } from "../../../review/args";
import { diffFields, diffObjects, flatten, renderObjects, restartsPods } from "../../../review/objects";
import { PROJECT_DIR } from "./fixture-repo";

const configOf = (stack: string) => {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return parsed.config;
};
const noSecrets = { hfToken: false, apiKey: false };

describe("review: vllm serve args side by side", () => {
  it("pairs each flag with its value; bare flags and --flag=value stay one unit", () => {
    assert.deepEqual(
      argUnits(["m", "--max-num-seqs", "4", "--enforce-eager", "--kv-cache-dtype=fp8", "--port", "8000"]),
      ["m", "--max-num-seqs 4", "--enforce-eager", "--kv-cache-dtype=fp8", "--port 8000"],
    );
  });

  it("shows a changed value as the old unit removed and the new one added, in place", () => {
    const lines = diffArgUnits(["m", "--a", "1", "--b", "2"], ["m", "--a", "1", "--b", "3"]);
    assert.deepEqual(lines, [
      { op: " ", unit: "m" },
      { op: " ", unit: "--a 1" },
      { op: "-", unit: "--b 2" },
      { op: "+", unit: "--b 3" },
    ]);
  });

  it("shows an inserted flag without shifting the rest", () => {
    assert.deepEqual(
      argChanges(diffArgUnits(["m", "--a", "1", "--c", "3"], ["m", "--a", "1", "--b", "2", "--c", "3"])),
      ["+ --b 2"],
    );
    assert.deepEqual(argChanges(diffArgUnits(["m", "--x"], ["m"])), ["- --x"]);
    assert.deepEqual(argChanges(diffArgUnits(["m"], ["m"])), []);
  });
});

describe("review: rendered objects against baseline's", () => {
  it("keys lists of named objects by name and keeps lists of plain values whole", () => {
    const flat = flatten({ spec: { containers: [{ name: "vllm", args: ["a", "b"] }], "odd-key": 1 } });
    assert.deepEqual(
      [...flat.entries()],
      [
        ["spec.containers[vllm].name", '"vllm"'],
        ["spec.containers[vllm].args", '["a","b"]'],
        ['spec["odd-key"]', "1"],
      ],
    );
    assert.deepEqual(diffFields({ a: 1, b: 2 }, { a: 1, c: 3 }), [
      { path: "b", before: "2", after: undefined },
      { path: "c", before: undefined, after: "3" },
    ]);
  });

  it("seqs1: the Deployment's args and stack annotation change, the pod restarts; claim and Service are untouched", () => {
    const diffs = diffObjects(
      renderObjects(configOf("baseline"), "baseline", noSecrets),
      renderObjects(configOf("seqs1"), "seqs1", noSecrets),
    );
    assert.deepEqual(
      diffs.map((d) => [d.kind, d.id, d.action, d.fields.map((f) => f.path)]),
      [
        [
          "Deployment",
          "gemmaforge/gemma4-12b",
          "update",
          ['metadata.annotations["vllm-tuner/stack"]', "spec.template.spec.containers[vllm].args"],
        ],
        ["PersistentVolumeClaim", "gemmaforge/gemma4-model-cache", "same", []],
        ["Service", "gemmaforge/gemma4-12b", "same", []],
      ],
    );
    assert.equal(restartsPods(diffs[0]!), true);
  });

  it("seqs4 (the control) only relabels the Deployment: no restart", () => {
    const diffs = diffObjects(
      renderObjects(configOf("baseline"), "baseline", noSecrets),
      renderObjects(configOf("seqs4"), "seqs4", noSecrets),
    );
    assert.deepEqual(diffs[0]!.fields, [
      { path: 'metadata.annotations["vllm-tuner/stack"]', before: '"baseline"', after: '"seqs4"' },
    ]);
    assert.equal(diffs.some(restartsPods), false);
  });

  it("cold creates its own claim and mounts it", () => {
    const diffs = diffObjects(
      renderObjects(configOf("baseline"), "baseline", noSecrets),
      renderObjects(configOf("cold"), "cold", noSecrets),
    );
    const created = diffs.filter((d) => d.action === "create");
    assert.deepEqual(
      created.map((d) => [d.id, d.body]),
      [
        [
          "gemmaforge/gemma4-model-cache-cold-r1",
          {
            metadata: {
              name: "gemma4-model-cache-cold-r1",
              namespace: "gemmaforge",
              labels: {
                "app.kubernetes.io/part-of": "vllm-tuner",
                "vllm-tuner/cache-role": "cold",
                "vllm-tuner/cold-run-id": "r1",
              },
              annotations: {
                "pulumi.com/patchForce": "true",
                "pulumi.com/patchFieldManager": "vllm-tuner",
                "pulumi.com/skipAwait": "true",
              },
            },
            spec: {
              accessModes: ["ReadWriteOnce"],
              storageClassName: "local-path",
              resources: { requests: { storage: "40Gi" } },
            },
          },
        ],
      ],
    );
    assert.deepEqual(
      diffs[0]!.fields.find((f) => f.path.endsWith("claimName")),
      {
        path: "spec.template.spec.volumes[model-cache].persistentVolumeClaim.claimName",
        before: '"gemma4-model-cache"',
        after: '"gemma4-model-cache-cold-r1"',
      },
    );
  });
});
