import { strict as assert } from "node:assert";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { request } from "undici";
import { locateTool } from "../../../common/tools";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig, vllmFlagValue } from "../../../config";
import { LabOptionsSchema } from "../../../lab/cluster/options";
import {
  buildLabImages,
  ENGINE_BANNER,
  ENGINE_LABEL,
  ENGINE_LABEL_VALUE,
  importImages,
  type LabImages,
  LOCAL_PATH_HELPER_IMAGE,
  PAUSE_IMAGE,
  stackImages,
} from "../../../lab/images";
import { freePort, requireSimulator } from "../benchmark/simulator";
import { PROJECT_DIR } from "../helpers";

/** Reads one file of an image tarball. */
function fromTar(tarball: string, member: string): Buffer {
  return execFileSync("tar", ["-xOf", tarball, member], { maxBuffer: 512 * 1024 * 1024 });
}

/** The image's config blob, through index.json and the manifest. */
function imageConfig(tarball: string): { config: { Entrypoint: string[]; Labels: Record<string, string> } } {
  const index = JSON.parse(fromTar(tarball, "index.json").toString("utf8"));
  const manifest = JSON.parse(fromTar(tarball, `blobs/sha256/${index.manifests[0].digest.slice(7)}`).toString("utf8"));
  return JSON.parse(fromTar(tarball, `blobs/sha256/${manifest.config.digest.slice(7)}`).toString("utf8"));
}

/** The tools a throwaway containerd needs, or why it cannot run here. */
function containerdTools(): { containerd: string; ctr: string } | string {
  if (process.getuid?.() !== 0) return "containerd needs root";
  const found: Record<string, string> = {};
  for (const name of ["containerd", "ctr", "runc", "containerd-shim-runc-v2"]) {
    const tool = locateTool(name);
    if ("error" in tool) return `${tool.error} (on Debian: apt-get install containerd runc)`;
    found[name] = tool.path;
  }
  return { containerd: found["containerd"]!, ctr: found["ctr"]! };
}

/** Skips the suite, saying why in the test's output (mocha itself shows no reason). */
function skip(ctx: Mocha.Context, reason: string): never {
  process.stdout.write(`      skipped: ${reason}\n`);
  ctx.skip();
}

/** Whether `url` answers 200 now. */
async function answers200(url: string): Promise<boolean> {
  try {
    const res = await request(url);
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

/** Waits for `child` to exit, at most `ms`; its exit code, or null when it is still running. */
function exited(child: ChildProcess, ms: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe("lab images: built with no registry", function () {
  this.timeout(600_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-images-it-"));
  const options = LabOptionsSchema.parse({ coldStartSeconds: 1, warmStartSeconds: 0.5 });
  let images: LabImages;

  before(function () {
    requireSimulator(this);
    for (const tool of ["go", "gcc", "tar", "ldd", "busybox"])
      if ("error" in locateTool(tool)) skip(this, `no ${tool} on PATH`);
    images = buildLabImages(options, dir);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes OCI layouts whose every blob matches its digest, named as the stacks and Kubernetes name them", () => {
    assert.deepEqual(images.pause.names, [PAUSE_IMAGE, "registry.k8s.io/pause:3.6"]);
    assert.deepEqual(images.engine.names, stackImages());
    assert.ok(images.engine.names.includes("vllm/vllm-openai:v0.24.0"));
    assert.deepEqual(images.helper.names, [LOCAL_PATH_HELPER_IMAGE]);
    for (const image of [images.pause, images.engine, images.helper]) {
      assert.equal(image.built, true);
      const members = execFileSync("tar", ["-tf", image.tarball], { encoding: "utf8" }).trim().split("\n");
      const blobs = members.filter((m) => m.startsWith("blobs/sha256/") && m.length > "blobs/sha256/".length);
      assert.equal(blobs.length, 3, `${image.tarball}: config, manifest and layer`);
      for (const blob of blobs) {
        assert.equal(createHash("sha256").update(fromTar(image.tarball, blob)).digest("hex"), path.basename(blob));
      }
      const index = JSON.parse(fromTar(image.tarball, "index.json").toString("utf8"));
      assert.deepEqual(
        index.manifests.map((m: { annotations: Record<string, string> }) => m.annotations["io.containerd.image.name"]),
        image.names,
      );
    }
    const engine = imageConfig(images.engine.tarball).config;
    assert.equal(engine.Labels[ENGINE_LABEL], ENGINE_LABEL_VALUE);
    assert.deepEqual(engine.Entrypoint, ["/usr/local/bin/node", "/opt/vllm-lab/engine.js"]);
    assert.deepEqual(imageConfig(images.pause.tarball).config.Entrypoint, ["/pause"]);
    // busybox's applets are links to it: the helper pods' /bin/sh, mkdir and rm.
    const index = JSON.parse(fromTar(images.helper.tarball, "index.json").toString("utf8"));
    const manifest = JSON.parse(
      fromTar(images.helper.tarball, `blobs/sha256/${index.manifests[0].digest.slice(7)}`).toString(),
    );
    const layer = path.join(dir, "helper-layer.tar");
    fs.writeFileSync(layer, fromTar(images.helper.tarball, `blobs/sha256/${manifest.layers[0].digest.slice(7)}`));
    const listing = execFileSync("tar", ["-tvf", layer], { encoding: "utf8" });
    for (const applet of ["sh", "mkdir", "rm"])
      assert.match(listing, new RegExp(`^l\\S+ 0/0 .* bin/${applet} -> busybox$`, "m"));
    assert.match(listing, /^-rwxr-xr-x 0\/0 .* bin\/busybox$/m);
    fs.rmSync(layer);
  });

  it("reuses an unchanged build and rebuilds a changed one", () => {
    const again = buildLabImages(options, dir);
    assert.deepEqual(
      [again.pause.built, again.engine.built, again.pause.tarball, again.engine.tarball],
      [false, false, images.pause.tarball, images.engine.tarball],
    );
    const other = buildLabImages({ ...options, coldStartSeconds: 2 }, dir);
    assert.equal(other.pause.tarball, images.pause.tarball);
    assert.equal(other.engine.built, true);
    assert.notEqual(other.engine.tarball, images.engine.tarball);
    // Another lab (another checkout, other timings) may be about to import it.
    assert.equal(fs.existsSync(images.engine.tarball), true, "the engine tarball used a moment ago is kept");
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(images.engine.tarball, hoursAgo, hoursAgo);
    const third = buildLabImages({ ...options, coldStartSeconds: 3 }, dir);
    assert.equal(third.engine.built, true);
    assert.equal(fs.existsSync(images.engine.tarball), false, "the engine tarball unused for two hours is removed");
    assert.equal(fs.existsSync(other.engine.tarball), true, "the one used a moment ago is kept");
    images = buildLabImages(options, dir);
  });

  describe("in a throwaway containerd: imported with ctr, run with runc", () => {
    let tools: { containerd: string; ctr: string };
    let containerd: ChildProcess;
    let sock: string;
    const ctr = (...args: string[]) =>
      execFileSync(tools.ctr, ["--address", sock, "-n", "k8s.io", ...args], { encoding: "utf8" });

    before(async function () {
      const found = containerdTools();
      if (typeof found === "string") skip(this, found);
      tools = found;
      const root = path.join(dir, "containerd");
      sock = path.join(root, "containerd.sock");
      fs.mkdirSync(root, { recursive: true });
      const config = path.join(root, "config.toml");
      fs.writeFileSync(
        config,
        [
          "version = 2",
          `root = "${root}/root"`,
          `state = "${root}/state"`,
          // The CRI plugin is the node's business; this one only imports and runs.
          'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
          "[grpc]",
          `  address = "${sock}"`,
          "[ttrpc]",
          `  address = "${sock}.ttrpc"`,
          "",
        ].join("\n"),
      );
      const log = fs.openSync(path.join(root, "containerd.log"), "a");
      containerd = spawn(tools.containerd, ["--config", config], { stdio: ["ignore", log, log] });
      for (let i = 0; i < 60; i++) {
        try {
          ctr("version");
          return;
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      throw new Error(
        `containerd did not answer on ${sock}: ${fs.readFileSync(path.join(root, "containerd.log"), "utf8")}`,
      );
    });
    after(async () => {
      if (!containerd) return;
      containerd.kill("SIGTERM");
      await exited(containerd, 10_000);
    });

    it("importImages names both in the CRI's namespace", async () => {
      await importImages(sock, [images.pause.tarball, images.engine.tarball], tools.ctr);
      const listed = ctr("images", "ls", "-q").trim().split("\n").sort();
      assert.deepEqual(listed, [...images.pause.names, ...images.engine.names].sort());
    });

    it("runs the engine with a stack's rendered args: the first line names the lab simulator; /health, /v1/models, a completion and /metrics answer", async () => {
      const port = await freePort();
      const id = `engine-${process.pid}`;
      // `ctr run` replaces the whole process argv, where the kubelet (CRI) appends a pod's `args` to
      // the image's Entrypoint: give it the image's own Entrypoint first, read from the image.
      const { Entrypoint } = imageConfig(images.engine.tarball).config;
      // The args the ctx4096 stack's Deployment renders (4 seqs, 4096 tokens), on a free port.
      const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, "ctx4096"));
      assert.ok(parsed.ok);
      const stack = { ...parsed.config, servicePort: port };
      const args = render.renderVllmArgs(stack, { apiKey: false });
      assert.deepEqual([vllmFlagValue(args, "--max-num-seqs"), vllmFlagValue(args, "--max-model-len")], ["4", "4096"]);
      // The cache claim's mount, as the Deployment mounts it at HF_HOME.
      const hfHome = path.join(dir, "hf-home");
      fs.mkdirSync(hfHome);
      const claim = ["--mount", `type=bind,src=${hfHome},dst=/models/huggingface,options=rbind:rw`];
      const run = spawn(
        tools.ctr,
        [
          ...["--address", sock, "-n", "k8s.io", "run", "--rm", "--net-host", ...claim],
          ...["--env", "HF_HOME=/models/huggingface", images.engine.names[0]!, id, ...Entrypoint, ...args],
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      run.stdout!.on("data", (c: Buffer) => (out += c.toString("utf8")));
      run.stderr!.on("data", (c: Buffer) => (out += c.toString("utf8")));
      try {
        let healthy = false;
        for (let i = 0; i < 120 && !healthy && run.exitCode === null; i++) {
          healthy = await answers200(`http://127.0.0.1:${port}/health`);
          if (!healthy) await new Promise((r) => setTimeout(r, 500));
        }
        assert.ok(healthy, `no /health on ${port}: ${out}`);
        assert.equal(out.split("\n")[0], ENGINE_BANNER);
        assert.match(out, /^lab simulator: simulated model load, cold: 1 s$/m);
        const marker = `hub/models--${stack.model.replace("/", "--")}/vllm-lab-simulator.json`;
        assert.ok(
          fs.existsSync(path.join(hfHome, marker)),
          "the claim holds the model's marker: the next start is warm",
        );
        const models = await request(`http://127.0.0.1:${port}/v1/models`).then((r) => r.body.json());
        assert.deepEqual(
          (models as { data: { id: string }[] }).data.map((m) => m.id),
          [stack.servedModelName],
        );
        const res = await request(`http://127.0.0.1:${port}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: stack.servedModelName, prompt: "a b c d", max_tokens: 8, ignore_eos: true }),
        });
        const body = (await res.body.json()) as { usage: { completion_tokens: number }; choices: unknown[] };
        assert.equal(res.statusCode, 200);
        assert.equal(body.choices.length, 1);
        assert.equal(body.usage.completion_tokens, 8);
        const metrics = await request(`http://127.0.0.1:${port}/metrics`).then((r) => r.body.text());
        assert.match(metrics, /^vllm:cache_config_info\{/m, "the KV layer's family");
      } finally {
        if (run.exitCode === null) ctr("task", "kill", "-s", "SIGTERM", id);
        assert.notEqual(await exited(run, 30_000), null, `the engine did not stop on SIGTERM: ${out}`);
      }
    });

    it("runs the pause image, which exits 0 on SIGTERM", async () => {
      const id = `pause-${process.pid}`;
      const run = spawn(tools.ctr, ["--address", sock, "-n", "k8s.io", "run", "--rm", "--net-host", PAUSE_IMAGE, id], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      run.stderr!.on("data", (c: Buffer) => (err += c.toString("utf8")));
      let running = false;
      for (let i = 0; i < 40 && !running; i++) {
        running = /RUNNING/.test(
          ctr("task", "ls")
            .split("\n")
            .find((l) => l.startsWith(id)) ?? "",
        );
        if (!running) await new Promise((r) => setTimeout(r, 250));
      }
      assert.ok(running, `pause never ran: ${err}`);
      ctr("task", "kill", "-s", "SIGTERM", id);
      assert.equal(await exited(run, 10_000), 0);
      assert.match(err, /Shutting down, got signal: Terminated/);
    });
  });
});
