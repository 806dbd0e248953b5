import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const BUILD = path.join(ROOT, "lab", "toolchain", "build.sh");

/** A pinned version from lab/toolchain/versions.env. */
function pinned(name: string): string {
  const m = fs
    .readFileSync(path.join(ROOT, "lab", "toolchain", "versions.env"), "utf8")
    .match(new RegExp(`^${name}=(.+)$`, "m"));
  if (!m) throw new Error(`${name} not in versions.env`);
  return m[1]!;
}

/** Runs build.sh STEPS with `places` (VLLM_LAB_HOME, PULUMI_HOME, ...) and no VLLM_LAB_TOOL_* override. */
function build(steps: readonly string[], places: Readonly<Record<string, string>>) {
  const env: NodeJS.ProcessEnv = { ...process.env, ...places };
  for (const k of Object.keys(env)) if (k.startsWith("VLLM_LAB_TOOL_")) delete env[k];
  const r = spawnSync("bash", [BUILD, ...steps], { env, encoding: "utf8" });
  return { rc: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The toolchain's first run on a fresh clone has no ../shared/third-party: the `command` plugin
 * (optional) is skipped with one line and the run still succeeds, so `npm run demo` and `npm test`
 * go on. Only the command-provider and plugins steps, in an empty cache: a second, no Go needed.
 */
describe("lab/toolchain/build.sh without the command provider's sources", () => {
  let tmp: string;
  let run: ReturnType<typeof build>;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-toolchain-"));
    run = build(["command-provider", "plugins"], {
      VLLM_LAB_HOME: path.join(tmp, "home"),
      PULUMI_HOME: path.join(tmp, "pulumi-home"),
      VLLM_LAB_THIRD_PARTY: path.join(tmp, "no-third-party"),
    });
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("exits 0 and says in one line what is skipped, what needs it and how to get it", () => {
    assert.equal(run.rc, 0, `${run.stdout}${run.stderr}`);
    assert.equal(run.stderr, "");
    const [version, goProvider] = [pinned("COMMAND_PROVIDER_VERSION"), pinned("COMMAND_GO_PROVIDER_VERSION")];
    const said = run.stdout.split("\n").filter((l) => l.includes("pulumi-resource-command") && l.startsWith("["));
    assert.deepEqual(said, [
      `[toolchain] pulumi-resource-command ${version}: skipped, no sources in ${path.join(tmp, "no-third-party")} ` +
        `(pulumi-command-${version}/provider, pulumi-go-provider-${goProvider}); only benchmarkOnDeploy and ` +
        "campaign run --via-deploy need it: with internet Pulumi installs the plugin itself, offline point " +
        "VLLM_LAB_THIRD_PARTY at a folder with those sources and run: bash lab/toolchain/build.sh command-provider plugins",
    ]);
    assert.match(run.stdout, new RegExp(`^pulumi-resource-command +${version.replace(/\./g, "\\.")} +skipped$`, "m"));
  });

  it("says only that it is not built when the Pulumi plugin cache has the plugin (downloaded by Pulumi)", () => {
    const version = pinned("COMMAND_PROVIDER_VERSION");
    const cached = path.join(tmp, "cache-has-it", "plugins", `resource-command-v${version}`);
    fs.mkdirSync(cached, { recursive: true });
    fs.copyFileSync("/bin/true", path.join(cached, "pulumi-resource-command"));
    const r = build(["command-provider"], {
      VLLM_LAB_HOME: path.join(tmp, "home2"),
      PULUMI_HOME: path.dirname(path.dirname(cached)),
      VLLM_LAB_THIRD_PARTY: path.join(tmp, "no-third-party"),
    });
    assert.equal(r.rc, 0, `${r.stdout}${r.stderr}`);
    assert.deepEqual(
      r.stdout.split("\n").filter((l) => l.startsWith("[toolchain]")),
      [`[toolchain] pulumi-resource-command ${version}: not built (no sources), the plugin cache has it: ${cached}`],
    );
  });

  it("builds nothing and installs no plugin", () => {
    assert.deepEqual(fs.readdirSync(path.join(tmp, "home", "bin")), []);
    assert.equal(fs.existsSync(path.join(tmp, "pulumi-home")), false);
  });
});

/**
 * The real node's parts are optional: without them (no Go to build the kubelet, no containerd on
 * PATH, no root for apt-get) one line says the real node is unavailable and the run exits 0.
 */
describe("lab/toolchain/build.sh without the real node's parts", () => {
  let tmp: string;
  let bare: Record<string, string>;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-toolchain-node-"));
    // A PATH with only what build.sh itself runs: no go, no containerd, no apt-get.
    const bin = path.join(tmp, "bin");
    fs.mkdirSync(bin);
    for (const tool of ["bash", "dirname", "mkdir", "cat", "id", "awk", "sed", "tr", "env", "nice"]) {
      const found = spawnSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).stdout.trim();
      fs.symlinkSync(found, path.join(bin, tool));
    }
    bare = { PATH: bin, VLLM_LAB_HOME: path.join(tmp, "home") };
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("k8s-node: exits 0, says the real node is unavailable and builds nothing", () => {
    const r = build(["k8s-node"], bare);
    assert.equal(r.rc, 0, `${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, "build.sh: go not found on PATH (needed to build kubernetes-node)\n");
    assert.deepEqual(
      r.stdout.split("\n").filter((l) => l.startsWith("[toolchain]")),
      [
        "[toolchain] kubernetes-node: build failed; real node unavailable (the lab's simulator runs on it): bash lab/toolchain/build.sh k8s-node shows why",
      ],
    );
    assert.deepEqual(fs.readdirSync(path.join(tmp, "home", "bin")), []);
  });

  it("local-path-provisioner: exits 0, says the real node is unavailable and builds nothing", () => {
    const r = build(["local-path-provisioner"], bare);
    assert.equal(r.rc, 0, `${r.stdout}${r.stderr}`);
    assert.equal(r.stderr, "build.sh: go not found on PATH (needed to build local-path-provisioner)\n");
    assert.deepEqual(
      r.stdout.split("\n").filter((l) => l.startsWith("[toolchain]")),
      [
        "[toolchain] local-path-provisioner: build failed; real node unavailable (the lab's simulator runs on it): bash lab/toolchain/build.sh local-path-provisioner shows why",
      ],
    );
    assert.deepEqual(fs.readdirSync(path.join(tmp, "home", "bin")), []);
  });

  it("node-packages: exits 0 and names what is missing and the command that installs it", () => {
    const r = build(["node-packages"], bare);
    assert.equal(r.rc, 0, `${r.stdout}${r.stderr}`);
    const said = r.stdout.split("\n").filter((l) => l.startsWith("[toolchain]"));
    assert.equal(said.length, 1);
    assert.ok(
      said[0]!.startsWith(
        "[toolchain] node-packages: real node unavailable (the lab's simulator runs on it): missing containerd containerd-shim-runc-v2 ctr runc iptables iptables-save iptables-restore busybox gcc libc.a;",
      ),
      said[0],
    );
    assert.ok(
      said[0]!.endsWith(
        `bash lab/toolchain/build.sh node-packages (apt-get install ${pinned("NODE_DEBIAN_PACKAGES").replace(/"/g, "")})`,
      ),
      said[0],
    );
  });
});
