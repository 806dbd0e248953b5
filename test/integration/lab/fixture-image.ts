import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * A test fixture: the smallest image a pod can run, with no registry. A static Go binary that says
 * one line and waits for SIGTERM or SIGINT (with LISTEN it also answers HTTP with its host name,
 * the pod's), compiled here, is the one file of a one-layer OCI image layout, tarred as
 * `ctr images import` reads it and named `name`.
 */

const FIXTURE_GO = `package main

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	// With LISTEN (":8080"), it also answers every HTTP request with its name: a Service's backend.
	if addr := os.Getenv("LISTEN"); addr != "" {
		go http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			name, _ := os.Hostname()
			fmt.Fprintln(w, name)
		}))
	}
	fmt.Println("fixture: waiting for SIGTERM")
	<-stop
}
`;

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** Builds the image in `workDir`; returns the tarball's path. Needs `go` and `tar` on PATH. */
export function buildFixtureImage(workDir: string, name: string): string {
  const src = path.join(workDir, "src");
  const rootfs = path.join(workDir, "rootfs");
  const layout = path.join(workDir, "layout");
  const blobs = path.join(layout, "blobs", "sha256");
  for (const dir of [src, rootfs, blobs]) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(src, "main.go"), FIXTURE_GO);
  execFileSync("go", ["build", "-trimpath", "-ldflags", "-s -w", "-o", path.join(rootfs, "fixture"), "main.go"], {
    cwd: src,
    env: { ...process.env, CGO_ENABLED: "0", GOFLAGS: "", GO111MODULE: "off" },
  });
  const layerFile = path.join(workDir, "layer.tar");
  execFileSync("tar", [
    "--numeric-owner",
    "--owner=0",
    "--group=0",
    "--mtime=@0",
    "-C",
    rootfs,
    "-cf",
    layerFile,
    "fixture",
  ]);
  const blob = (bytes: Buffer, mediaType: string) => {
    const digest = sha256(bytes);
    fs.writeFileSync(path.join(blobs, digest), bytes);
    return { mediaType, digest: `sha256:${digest}`, size: bytes.length };
  };
  const layer = blob(fs.readFileSync(layerFile), "application/vnd.oci.image.layer.v1.tar");
  const config = blob(
    Buffer.from(
      JSON.stringify({
        architecture: "amd64",
        os: "linux",
        config: {
          Entrypoint: ["/fixture"],
          Labels: { "org.vllm-tuner.fixture": "test/integration/lab/fixture-image.ts" },
        },
        rootfs: { type: "layers", diff_ids: [layer.digest] },
      }),
    ),
    "application/vnd.oci.image.config.v1+json",
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config,
        layers: [layer],
      }),
    ),
    "application/vnd.oci.image.manifest.v1+json",
  );
  const tag = name.slice(name.lastIndexOf(":") + 1);
  fs.writeFileSync(path.join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  fs.writeFileSync(
    path.join(layout, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          ...manifest,
          platform: { architecture: "amd64", os: "linux" },
          annotations: { "io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag },
        },
      ],
    }),
  );
  const tarball = path.join(workDir, "fixture-image.tar");
  execFileSync("tar", ["-C", layout, "-cf", tarball, "oci-layout", "index.json", "blobs"]);
  return tarball;
}
