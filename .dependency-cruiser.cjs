/**
 * Layer rules (docs/architecture.md, "Layers"): a module may import its own layer and the layers below it,
 * never one above. From the bottom:
 *   common      atomic write, git info, UsageError, Markdown table, exit codes, tool locator
 *   config      the stack config schema, parser and one-knob rule             (-> common)
 *   components  the Pulumi components and their pure render functions       (-> config, common)
 *   result      what a benchmark run recorded, the results store   (-> benchmarks, config, common)
 *   verdict     the rule, the noise, the recommendation, proposals (-> result, benchmarks, config, common)
 *   benchmarks  the post-deploy benchmark                           (-> verdict, result, config, common)
 *   lab         the GPU-less lab                                              (-> config, common)
 *   index.ts    the Pulumi program                                (-> components, config, common)
 *   campaign    every candidate in turn (-> benchmarks, verdict, result, components, lab, config, common)
 *   review      the review command and workflows                 (-> campaign and everything below)
 * benchmarks is on both sides of result and verdict: what a run measures (MEASURED: inputs, http, kube,
 * metrics, load, stats, measured) is below result, whose schema is composed of those parts' schemas; how
 * a run is driven and shown (ENGINE_TOP: run, cli, post-deploy, report, export) is above verdict. The
 * rules below keep the two halves apart, so no cycle runs through the layers.
 * A layer with a face (FACES: an index.ts) is entered from another layer only through that file.
 * Tests and scripts may import anything; nothing imports them.
 */
const LAYERS = [
  "common",
  "config",
  "components",
  "result",
  "verdict",
  "benchmarks",
  "lab",
  "index.ts",
  "campaign",
  "review",
];
const ALLOWED = {
  common: [],
  config: ["common"],
  components: ["config", "common"],
  result: ["benchmarks", "config", "common"],
  verdict: ["result", "benchmarks", "config", "common"],
  benchmarks: ["verdict", "result", "config", "common"],
  lab: ["config", "common"],
  "index.ts": ["components", "config", "common"],
  campaign: ["benchmarks", "verdict", "result", "components", "lab", "config", "common"],
  review: ["campaign", "benchmarks", "verdict", "result", "components", "lab", "config", "common"],
};
const path = (layer) => (layer === "index.ts" ? "^index\\.ts$" : `^${layer}/`);
/** Layers entered from outside only through their index.ts; the key: who else may reach behind it, and why. */
const FACES = {
  verdict: [],
  result: [],
  // result's schema is composed of the measured parts' schemas, and verdict judges their SLO figures.
  benchmarks: ["result", "verdict"],
  campaign: [],
  lab: [],
};
const MEASURED = "^benchmarks/(inputs|http|kube|metrics|load)/|^benchmarks/(stats|measured)\\.ts$";
const ENGINE_TOP = "^benchmarks/(report|export)/|^benchmarks/(cli|run|post-deploy|index)\\.ts$";

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
    ...Object.entries(FACES).map(([layer, alsoBehind]) => ({
      name: `face-${layer}`,
      comment: `from outside ${layer}/, import ${layer}/index.ts, its face, not the files behind it (.dependency-cruiser.cjs)`,
      severity: "error",
      from: { pathNot: `^(${[layer, ...alsoBehind, "test", "scripts"].join("|")})/` },
      to: { path: `^${layer}/`, pathNot: `^${layer}/index\\.ts$` },
    })),
    {
      name: "measured-below-result",
      comment: "what a run measures (benchmarks' inputs, http, kube, metrics, load) is below result/ and verdict/",
      severity: "error",
      from: { path: MEASURED },
      to: { path: "^(result|verdict)/" },
    },
    {
      name: "result-reads-only-measured",
      comment: "result/ (what a run recorded) imports of benchmarks only what a run measures",
      severity: "error",
      from: { path: "^result/" },
      to: { path: "^benchmarks/", pathNot: MEASURED },
    },
    {
      name: "result-below-verdict",
      comment: "result/ (what a run recorded) must not depend on verdict/ (how it is judged)",
      severity: "error",
      from: { path: "^result/" },
      to: { path: "^verdict/" },
    },
    {
      name: "verdict-below-engine-top",
      comment: "verdict/ (the judgement) must not depend on how a run is driven or shown (benchmarks' run, report)",
      severity: "error",
      from: { path: "^verdict/" },
      to: { path: ENGINE_TOP },
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
