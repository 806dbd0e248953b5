/**
 * Layer rules (docs/architecture.md, "Layers"): a module may import its own layer and the layers below it,
 * never one above. From the bottom:
 *   common      atomic write, git info, UsageError, Markdown table, exit codes, tool locator
 *   config      the stack config schema, parser and one-knob rule                      (-> common)
 *   components  the Pulumi components and their pure render functions                (-> config, common)
 *   twin        the engine's step model and its replays in virtual time, the fit to a candidate's own
 *               measurements, the long-run prediction and its check; pure                (-> config, common)
 *   measure     what a run measures: scenario and SLO, vLLM and Kubernetes clients, metrics, load, stats,
 *               the Measured wrapper; the parts result's schema is made of             (-> config, common)
 *   result      what a benchmark run recorded, the results store             (-> measure, twin, config, common)
 *   verdict     every judgement: a level's SLO figures, the sweep's, the rule, the noise, the
 *               recommendation, proposals                     (-> result, measure, twin, config, common)
 *   benchmarks  the benchmark run: its phases, the run, the reports, export, the CLI, post-deploy
 *                                                     (-> verdict, result, measure, twin, config, common)
 *   lab         the GPU-less lab                                                 (-> twin, config, common)
 *   index.ts    the Pulumi program                                         (-> components, config, common)
 *   campaign    every candidate in turn                          (-> benchmarks and everything below it,
 *                                                                              components, lab)
 *   review      the review command and workflows                          (-> campaign and everything below)
 * Each layer is one top folder: no folder holds two layers, so the table is the whole rule.
 * A layer with a face (FACES: an index.ts, or the files it names) is entered from another layer only through
 * it; config's and components' faces that load the Pulumi runtime are the program's alone. measure/ has no
 * face: result/ composes its schema from measure's parts one by one, as common/'s modules are imported.
 * The lab's rooms (LAB_ROOMS) are entered through their faces too (lab-rooms-<room>).
 * Tests and scripts may import anything; nothing imports them.
 */
const LAYERS = [
  "common",
  "config",
  "components",
  "twin",
  "measure",
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
  twin: ["config", "common"],
  measure: ["config", "common"],
  result: ["measure", "twin", "config", "common"],
  verdict: ["result", "measure", "twin", "config", "common"],
  benchmarks: ["verdict", "result", "measure", "twin", "config", "common"],
  lab: ["twin", "config", "common"],
  "index.ts": ["components", "config", "common"],
  campaign: ["benchmarks", "verdict", "result", "measure", "twin", "components", "lab", "config", "common"],
  review: ["campaign", "benchmarks", "verdict", "result", "measure", "twin", "components", "lab", "config", "common"],
};
const path = (layer) => (layer === "index.ts" ? "^index\\.ts$" : `^${layer}/`);
/**
 * Layers entered from outside only through their faces: `index.ts` unless `faces` names them, each with the
 * layers it is for (`ANY`: every layer allowed to import this one).
 */
const ANY = "any";
const FACES = {
  verdict: {},
  result: {},
  benchmarks: {},
  campaign: {},
  lab: {},
  // index.ts is pure ("config-face-pure"): the campaign CLI, the lab and the review read config without the
  // Pulumi runtime. load.ts, the program's reader of the engine's config, loads it: the program's alone.
  config: { faces: { "index.ts": ANY, "load.ts": ["index.ts"] } },
  // index.ts holds the Pulumi components, the program's alone; render/ (what each object looks like) and
  // rollout/ (why a pod will not start) are pure ("components-pure-parts") for the campaign and the review.
  components: { faces: { "index.ts": ["index.ts"], "render/index.ts": ANY, "rollout/index.ts": ANY } },
};
/**
 * lab/'s rooms (docs/lab.md), each entered from elsewhere in lab/ only through its index.ts. From the bottom:
 * emulation (vLLM emulated), cluster (the lab's options, state and objects), process-engine (its own node),
 * images, node (the real node), lifecycle (start and stop); lab's root holds its command line and face.
 */
const LAB_ROOMS = ["emulation", "cluster", "process-engine", "images", "node", "lifecycle"];
const escaped = (file) => file.replace(/[.]/g, "\\.");
/** Who may import `layer/face`: its layer's own files, the layers the face is for, tests and scripts. */
const faceUsers = (layer, users) => ["test/", "scripts/", `${layer}/`, ...users.map(path).map((p) => p.slice(1))];
/** A Pulumi package (where node_modules links to another checkout's, its path leads there). */
const PULUMI_PACKAGE = "(^|/)node_modules/@pulumi/";

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
    ...Object.entries(FACES).map(([layer, { faces = { "index.ts": ANY } }]) => ({
      name: `face-${layer}`,
      comment: `from outside ${layer}/, import its face (${Object.keys(faces).join(", ")}), not the files behind it (.dependency-cruiser.cjs)`,
      severity: "error",
      from: { pathNot: `^(${[layer, "test", "scripts"].join("|")})/` },
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
    ...LAB_ROOMS.map((room) => ({
      name: `lab-rooms-${room}`,
      comment: `from elsewhere in lab/, import lab/${room}/index.ts, not the files behind it (.dependency-cruiser.cjs, LAB_ROOMS)`,
      severity: "error",
      from: { path: "^lab/", pathNot: `^lab/${room}/` },
      to: { path: `^lab/${room}/`, pathNot: `^lab/${room}/index\\.ts$` },
    })),
    {
      name: "lab-cluster-light",
      comment:
        "lab/cluster/ loads no Kubernetes client (type-only imports aside): every room reads it, the engine image's bundle too",
      severity: "error",
      from: { path: "^lab/cluster/" },
      to: { path: "(^|/)node_modules/@kubernetes/", dependencyTypesNot: ["type-only"] },
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
