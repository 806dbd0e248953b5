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
 * A layer with a face (FACES: an index.ts, or the files it names) is entered from another layer only through
 * it; config's and components' faces that load the Pulumi runtime are the program's alone.
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
/**
 * Layers entered from outside only through their faces: `index.ts` unless `faces` names them, each with the
 * layers it is for (`ANY`: every layer allowed to import this one); `behind`: who else may reach past the
 * faces, and why.
 */
const ANY = "any";
const FACES = {
  verdict: {},
  result: {},
  // result's schema is composed of the measured parts' schemas, and verdict judges their SLO figures.
  benchmarks: { behind: ["result", "verdict"] },
  campaign: {},
  lab: {},
  // index.ts is pure ("config-face-pure"): the campaign CLI, the lab and the review read config without the
  // Pulumi runtime. load.ts, the program's reader of the engine's config, loads it: the program's alone.
  config: { faces: { "index.ts": ANY, "load.ts": ["index.ts"] } },
  // index.ts holds the Pulumi components, the program's alone; render/ (what each object looks like) and
  // rollout/ (why a pod will not start) are pure ("components-pure-parts") for the campaign and the review.
  components: { faces: { "index.ts": ["index.ts"], "render/index.ts": ANY, "rollout/index.ts": ANY } },
};
const escaped = (file) => file.replace(/[.]/g, "\\.");
/** Who may import `layer/face`: its layer's own files, the layers the face is for, tests and scripts. */
const faceUsers = (layer, users) => ["test/", "scripts/", `${layer}/`, ...users.map(path).map((p) => p.slice(1))];
/** A Pulumi package (where node_modules links to another checkout's, its path leads there). */
const PULUMI_PACKAGE = "(^|/)node_modules/@pulumi/";
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
    ...Object.entries(FACES).map(([layer, { faces = { "index.ts": ANY }, behind = [] }]) => ({
      name: `face-${layer}`,
      comment: `from outside ${layer}/, import its face (${Object.keys(faces).join(", ")}), not the files behind it (.dependency-cruiser.cjs)`,
      severity: "error",
      from: { pathNot: `^(${[layer, ...behind, "test", "scripts"].join("|")})/` },
      to: { path: `^${layer}/`, pathNot: `^${layer}/(${Object.keys(faces).map(escaped).join("|")})$` },
    })),
    ...Object.entries(FACES).flatMap(([layer, { faces = {} }]) =>
      Object.entries(faces)
        .filter(([, users]) => users !== ANY)
        .map(([face, users]) => ({
          name: `face-${layer}-${face.replace(/\.ts$/, "").replace(/\//g, "-")}`,
          comment: `${layer}/${face} is for ${users.join(", ")} only (.dependency-cruiser.cjs, FACES)`,
          severity: "error",
          from: { pathNot: `^(${faceUsers(layer, users).join("|")})` },
          to: { path: `^${layer}/${escaped(face)}$` },
        })),
    ),
    {
      name: "config-face-pure",
      comment: "config/index.ts loads no Pulumi package: the campaign CLI, the lab and the review read config without it",
      severity: "error",
      from: { path: "^config/index\\.ts$" },
      to: { path: PULUMI_PACKAGE, reachable: true },
    },
    {
      name: "components-pure-parts",
      comment:
        "components' render/, rollout/ and kube/ load no Pulumi runtime (type-only imports aside): the campaign and the review use them",
      severity: "error",
      from: { path: "^components/(render|rollout|kube)/" },
      to: {
        path: `${PULUMI_PACKAGE}|^components/[^/]+\\.ts$|^config/load\\.ts$`,
        dependencyTypesNot: ["type-only"],
      },
    },
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
