import { strict as assert } from "node:assert";
import { labHome, locateTool, toolchainBin, toolEnvVar } from "../../common/tools";

/** Only these files are executables; nothing touches the disk. */
const only =
  (...files: string[]) =>
  (f: string) =>
    files.includes(f);
const ENV = { VLLM_LAB_HOME: "/lab", PATH: "/usr/local/bin:/usr/bin" };

describe("tool locator (common/tools.ts): override, then toolchain, then PATH", () => {
  it("names the override variable after the tool", () => {
    assert.equal(toolEnvVar("llm-d-inference-sim"), "VLLM_LAB_TOOL_LLM_D_INFERENCE_SIM");
    assert.equal(toolEnvVar("kube-apiserver"), "VLLM_LAB_TOOL_KUBE_APISERVER");
  });

  it("puts the toolchain under VLLM_LAB_HOME, else ~/.cache/vllm-lab", () => {
    assert.equal(toolchainBin({ VLLM_LAB_HOME: "/x" }), "/x/bin");
    assert.match(labHome({}), /\/\.cache\/vllm-lab$/);
    assert.match(labHome({ VLLM_LAB_HOME: "" }), /\/\.cache\/vllm-lab$/);
  });

  it("prefers an explicit override to everything", () => {
    const env = { ...ENV, VLLM_LAB_TOOL_PULUMI: "/opt/p/bin/pulumi" };
    assert.deepEqual(locateTool("pulumi", env, only("/opt/p/bin/pulumi", "/lab/bin/pulumi", "/usr/bin/pulumi")), {
      path: "/opt/p/bin/pulumi",
      source: "override",
    });
    assert.deepEqual(locateTool("pulumi", env, only("/lab/bin/pulumi")), {
      error: "VLLM_LAB_TOOL_PULUMI=/opt/p/bin/pulumi is not an executable file",
    });
  });

  it("prefers the toolchain's pinned build to one on PATH", () => {
    assert.deepEqual(locateTool("etcd", ENV, only("/lab/bin/etcd", "/usr/local/bin/etcd")), {
      path: "/lab/bin/etcd",
      source: "toolchain",
    });
  });

  it("takes the first on PATH when the toolchain lacks it", () => {
    assert.deepEqual(locateTool("etcd", ENV, only("/usr/local/bin/etcd", "/usr/bin/etcd")), {
      path: "/usr/local/bin/etcd",
      source: "PATH",
    });
  });

  it("says where it looked and how to build it", () => {
    assert.deepEqual(locateTool("kwok", ENV, only()), {
      error:
        "kwok not found: not set in VLLM_LAB_TOOL_KWOK, not in /lab/bin, not on PATH; build it with `bash lab/toolchain/build.sh`",
    });
  });
});
