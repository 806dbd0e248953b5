import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LabStateSchema } from "../../../lab/cluster/options";
import { kubeClients, PROJECT_DIR } from "../helpers";

/** Runs a bash script with the test's environment minus what would leak this checkout into the bundle's. */
function bash(script: string, cwd: string): { rc: number | null; out: string; stdout: string } {
  const env = { ...process.env };
  for (const k of ["NODE_OPTIONS", "VLLM_LAB_HOME", "PULUMI_HOME", "KUBECONFIG", "VLLM_TUNER_BUNDLE"]) delete env[k];
  const r = spawnSync("bash", ["-c", script], { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { rc: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

function sha256(file: string): string {
  const hash = createHash("sha256");
  const fd = fs.openSync(file, "r");
  const buf = Buffer.alloc(1 << 20);
  for (let n = fs.readSync(fd, buf); n > 0; n = fs.readSync(fd, buf)) hash.update(buf.subarray(0, n));
  fs.closeSync(fd);
  return hash.digest("hex");
}

/**
 * The offline bundle for real, without the vLLM wheels: `npm run bundle` here, the documented
 * unpack command into a fresh directory, and the lab (the process engine, a fake vLLM) started from the unpacked
 * copy with nothing of this checkout on the way: its own Node, node_modules, toolchain and plugins.
 */
describe("offline bundle: built, unpacked and the lab started from the unpacked copy", function () {
  this.timeout(20 * 60_000);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-bundle-"));
  const outDir = path.join(root, "out");
  const host = path.join(root, "host");
  const repo = path.join(host, "repo");
  let archive = "";

  before(() => {
    // xz -0: the test is about what goes in and comes out, not the ratio.
    const built = bash(`bash lab/bundle/build.sh --xz-level 0 --out ${outDir}`, PROJECT_DIR);
    assert.equal(built.rc, 0, built.out);
    archive = built.stdout.trim().split("\n").at(-1)!;
    assert.match(path.basename(archive), /^vllm-tuner-bundle-[0-9a-f]{7,}(-dirty)?\.tar\.xz$/);
  });
  after(() => {
    if (fs.existsSync(path.join(repo, ".lab", "state.json"))) {
      bash(`source ${host}/env.sh && npm run lab:down`, repo);
    }
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("writes one archive whose .sha256 matches, with unpack.sh as its first member", () => {
    assert.deepEqual(fs.readdirSync(outDir).sort(), [path.basename(archive), `${path.basename(archive)}.sha256`]);
    assert.equal(fs.readFileSync(`${archive}.sha256`, "utf8"), `${sha256(archive)}  ${path.basename(archive)}\n`);
    const first = bash(`tar -tJf ${archive} | head -4`, outDir);
    assert.deepEqual(first.out.trim().split("\n"), ["unpack.sh", "MANIFEST", "SHA256SUMS", "repo/"]);
    // The sizes, read as docs/offline-bundle.md says: the MANIFEST straight from the archive.
    const manifest = bash(`tar -xJOf ${archive} --occurrence=1 MANIFEST`, outDir);
    assert.equal(manifest.rc, 0, manifest.out);
    const sized = /^ {2}(\S+) +\d+ files +\d+ bytes +\d+ xz-bytes {2}xz-sha256 [0-9a-f]{64}$/gm;
    assert.deepEqual(
      [...manifest.stdout.matchAll(sized)].map((m) => m[1]),
      ["repo", "node", "bin"],
    );
  });

  it("refuses an archive that does not match its .sha256, extracting nothing", () => {
    const bad = path.join(root, "bad", path.basename(archive));
    fs.mkdirSync(path.dirname(bad));
    fs.writeFileSync(bad, fs.readFileSync(archive).subarray(0, 1 << 20));
    fs.copyFileSync(`${archive}.sha256`, `${bad}.sha256`);
    const r = bash(`bash lab/bundle/unpack.sh ${bad} ${root}/bad-host`, PROJECT_DIR);
    assert.equal(r.rc, 2, r.out);
    assert.match(r.out, /sha256 is [0-9a-f]{64}, .*\.sha256 says [0-9a-f]{64}/);
    assert.equal(fs.existsSync(path.join(root, "bad-host")), false);
  });

  it("unpacks with the documented command and passes the smoke check", () => {
    const name = path.basename(archive);
    const r = bash(`tar -xJf ${name} --occurrence=1 unpack.sh && bash unpack.sh ${name} ${host}`, outDir);
    assert.equal(r.rc, 0, r.out);
    assert.match(r.out, /^smoke: PASS$/m);
    assert.match(r.out, new RegExp(`source ${host}/env.sh`));
    const manifest = fs.readFileSync(path.join(host, "MANIFEST"), "utf8");
    assert.match(manifest, /^vllm: +not included/m);
    assert.match(manifest, /^node: +v24\./m);
    // The unpacked checkout has its own node_modules, not a link back to this one.
    assert.equal(fs.lstatSync(path.join(repo, "node_modules")).isDirectory(), true);
    assert.equal(fs.existsSync(path.join(repo, "node_modules", "@biomejs")), false);
    // The Pulumi program is built already: the trimmed tree has no compiler (typescript's tsc) to build it.
    assert.equal(fs.existsSync(path.join(repo, "node_modules", "typescript", "lib", "_tsc.js")), false);
    const program = bash(`source ${host}/env.sh && node program.js`, repo);
    assert.equal(program.rc, 0, program.out);
    assert.match(program.stdout, /^\.program\/[0-9a-f]{16}\/index\.js\n$/);
  });

  it("starts the lab from the unpacked copy, which answers, and stops it", () => {
    // The process engine, as on the air-gapped GPU host the bundle is for (docs/lab.md: the simulator
    // engine runs on the real node, whose kubelet and Debian packages the bundle does not carry), with
    // the unpacked copy's own fake vLLM for Python. This machine has no GPU, so the copy's startLab is
    // told there is one (what lab:up would refuse here), as test/integration/lab/gpus.test.ts does.
    const fakeVllm = path.join(repo, "test", "integration", "lab", "fake-vllm.cjs");
    const start = [
      'const { startLab } = require("./lab/lifecycle/cluster");',
      'const { hostProbes } = require("./lab/cluster/preflight");',
      `startLab({ engine: "vllm", vllmPython: ${JSON.stringify(fakeVllm)}, coldStartSeconds: 2, warmStartSeconds: 1 },`,
      "  { hasGpu: () => true, importVllm: hostProbes.importVllm })",
      "  .then(() => process.exit(0), (e) => { console.error(e.message); process.exit(1); });",
    ].join("\n");
    const up = bash(`source ${host}/env.sh && node --import tsx -e '${start}'`, repo);
    assert.equal(up.rc, 0, up.out);
    const state = LabStateSchema.parse(JSON.parse(fs.readFileSync(path.join(repo, ".lab", "state.json"), "utf8")));
    assert.equal(state.kubeconfig, path.join(repo, ".lab", "kubeconfig"));
    const status = bash(`source ${host}/env.sh && npm run lab:status`, repo);
    assert.equal(status.rc, 0, status.out);
    return (async () => {
      const { core } = kubeClients(state.kubeconfig);
      const nodes = await core.listNode();
      assert.deepEqual(
        nodes.items.map((n) => n.metadata?.name),
        [state.nodeName],
      );
      const down = bash(`source ${host}/env.sh && npm run lab:down`, repo);
      assert.equal(down.rc, 0, down.out);
      assert.equal(fs.existsSync(path.join(repo, ".lab", "state.json")), false);
    })();
  });
});
