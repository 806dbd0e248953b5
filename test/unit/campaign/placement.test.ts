import { strict as assert } from "node:assert";
import { cacheReachProblem } from "../../../campaign/placement";

const cache = (over: Record<string, string> = {}) => ({
  stack: "baseline",
  cacheMode: "warm",
  cacheClaimName: "gemma4-model-cache",
  cacheStorageClass: "local-path",
  cacheAccessMode: "ReadWriteOnce",
  ...over,
});
const twoNodes = ["gpu-node-0", "gpu-node-1"];

describe("campaign --parallel: the model cache must be mountable from every GPU node", () => {
  it("lets a ReadWriteOnce cache through with one slot or one GPU node", () => {
    const none = new Map<string, string[]>();
    assert.equal(cacheReachProblem({ parallel: 1, gpuNodes: twoNodes, stacks: [cache()], liveClaims: none }), null);
    assert.equal(
      cacheReachProblem({ parallel: 4, gpuNodes: ["gpu-node-0"], stacks: [cache()], liveClaims: none }),
      null,
    );
  });

  it("refuses a ReadWriteOnce cache over two GPU nodes, naming the stack, claim, class and the fix", () => {
    const problem = cacheReachProblem({
      parallel: 2,
      gpuNodes: twoNodes,
      stacks: [cache(), cache({ stack: "cold", cacheMode: "cold" })],
      liveClaims: new Map(),
    });
    assert.equal(
      problem,
      "--parallel 2 over 2 GPU nodes (gpu-node-0, gpu-node-1): the model cache cannot be mounted from each node, " +
        "so a slot the scheduler places on another node than the claim would stay Pending:\n" +
        "  baseline: cacheAccessMode is ReadWriteOnce (claim gemma4-model-cache, storage class local-path)\n" +
        "Set cacheAccessMode: ReadWriteMany with a cacheStorageClass that offers it (NFS, CephFS, a cloud file store) in Pulumi.yaml, " +
        "or use --parallel 1 (see docs/campaign.md, Placement and caches)",
    );
  });

  it("accepts ReadWriteMany, unless the claim already in the cluster was made ReadWriteOnce", () => {
    const rwx = cache({ cacheAccessMode: "ReadWriteMany", cacheStorageClass: "nfs-client" });
    assert.equal(cacheReachProblem({ parallel: 2, gpuNodes: twoNodes, stacks: [rwx], liveClaims: new Map() }), null);
    assert.equal(
      cacheReachProblem({
        parallel: 2,
        gpuNodes: twoNodes,
        stacks: [rwx],
        liveClaims: new Map([["gemma4-model-cache", ["ReadWriteMany"]]]),
      }),
      null,
    );
    const problem = cacheReachProblem({
      parallel: 2,
      gpuNodes: twoNodes,
      stacks: [rwx],
      liveClaims: new Map([["gemma4-model-cache", ["ReadWriteOnce"]]]),
    });
    assert.match(
      problem ?? "",
      /\n {2}baseline: the claim gemma4-model-cache in the cluster is ReadWriteOnce \(a claim's access mode cannot change: name a new one in cacheClaimName\)\n/,
    );
  });
});
