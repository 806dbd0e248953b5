/**
 * Layer rules (docs/architecture.md, "Layers"): a module may import its own layer and the layers below it,
 * never one above. From the bottom:
 *   common      atomic write, git info, UsageError, Markdown table, exit codes, tool locator
 *   config      the stack config schema, parser and one-knob rule             (-> common)
 *   components  the Pulumi components and their pure render functions       (-> config, common)
 *   benchmarks  the post-deploy benchmark                                     (-> config, common)
 *   lab         the GPU-less lab                                              (-> config, common)
 *   index.ts    the Pulumi program                                (-> components, config, common)
 *   campaign    every candidate in turn    (-> benchmarks, components, lab, config, common)
 *   review      the review command and workflows                 (-> campaign and everything below)
 * Inside benchmarks, result/ (what a run recorded) sits below verdict/ (the rule, the noise, the
 * recommendation, candidate summaries and proposals: the verdict's one home), and verdict/ below
 * report/ (how it is shown).
 * Tests and scripts may import anything; nothing imports them.
 */
const LAYERS = ["common", "config", "components", "benchmarks", "lab", "index.ts", "campaign", "review"];
const ALLOWED = {
  common: [],
  config: ["common"],
  components: ["config", "common"],
  benchmarks: ["config", "common"],
  lab: ["config", "common"],
  "index.ts": ["components", "config", "common"],
  campaign: ["benchmarks", "components", "lab", "config", "common"],
  review: ["campaign", "benchmarks", "components", "lab", "config", "common"],
};
const path = (layer) => (layer === "index.ts" ? "^index\\.ts$" : `^${layer}/`);

module.exports = {
  forbidden: [
    ...LAYERS.map((layer) => ({
      name: `layer-${layer.replace(".ts", "")}`,
      comment: `${layer} may import only ${ALLOWED[layer].join(", ") || "nothing of ours"} (.dependency-cruiser.cjs)`,
      severity: "error",
      from: { path: path(layer) },
      to: {
        path: `^(${[...LAYERS.filter((l) => l !== layer && !ALLOWED[layer].includes(l)).map(path), "^test/", "^scripts/"]
          .map((p) => p.replace(/^\^/, ""))
          .join("|")})`,
      },
    })),
    {
      name: "result-below-report",
      comment: "result/ (what a run recorded) must not depend on benchmarks/report (how it is shown)",
      severity: "error",
      from: { path: "^result/" },
      to: { path: "^benchmarks/report/" },
    },
    {
      name: "result-below-verdict",
      comment: "result/ (what a run recorded) must not depend on verdict/ (how it is judged)",
      severity: "error",
      from: { path: "^result/" },
      to: { path: "^verdict/" },
    },
    {
      name: "verdict-below-report",
      comment: "verdict/ (the judgement) must not depend on benchmarks/report (how it is shown)",
      severity: "error",
      from: { path: "^verdict/" },
      to: { path: "^benchmarks/report/" },
    },
    {
      name: "no-circular",
      comment: "a cycle makes two modules one; split what both need into a lower module",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      comment: "an import that resolves to nothing",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|\\.lab|\\.program|results)/" },
    // Type-only imports are dependencies between layers too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".cjs", ".json"] },
  },
};
