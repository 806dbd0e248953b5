import * as assert from "node:assert/strict";
import { SEED_NODE_RESOURCES } from "../../../lab/cluster/manifests";
import { parseCpuList, quantityValue, seedMachine, seedMeminfo, topologyTree } from "../../../lab/node/machine";

const MEMINFO = "MemTotal:       24683664 kB\nMemFree:         1000000 kB\nSwapTotal:             0 kB\n";

describe("lab --node real: the machine the kubelet is shown (the seed's)", () => {
  it("takes kwok's node's figures: 16 CPUs, 64 GiB, 110 pods, a 500 GiB disk", () => {
    assert.deepEqual(SEED_NODE_RESOURCES, { cpu: "16", memory: "64Gi", pods: "110", "ephemeral-storage": "500Gi" });
    assert.deepEqual(seedMachine(), {
      cpus: 16,
      memoryBytes: 64 * 2 ** 30,
      diskBytes: 500 * 2 ** 30,
      maxPods: 110,
    });
  });

  it("refuses a quantity it cannot turn into an integer, naming the field and value", () => {
    assert.equal(quantityValue("memory", "512Mi"), 512 * 2 ** 20);
    assert.throws(
      () => quantityValue("cpu", "1500m"),
      /^Error: cpu: "1500m" is not an integer quantity \(allowed: digits, then Ki, Mi, Gi or Ti\)$/,
    );
  });

  it("renders the seed's 16 CPUs as NUMA nodes of this machine's CPUs, so the kubelet's cpuset is this machine's", () => {
    const tree = topologyTree(seedMachine(), parseCpuList("0-1\n"));
    const cpus = Object.keys(tree)
      .filter((f) => f.endsWith("/topology/core_id"))
      .map((f) => f.split("/").slice(0, 2).join("/"));
    assert.deepEqual(
      cpus,
      Array.from({ length: 16 }, (_, i) => `node${Math.floor(i / 2)}/cpu${i % 2}`),
    );
    assert.equal(tree["node3/cpu1/topology/core_id"], "7\n");
    assert.equal(tree["node3/cpu1/topology/physical_package_id"], "0\n");
    assert.equal(tree["node0/meminfo"], "Node 0 MemTotal:       8388608 kB\n");
    assert.equal(tree["node1/distance"], "20 10 20 20 20 20 20 20\n");
    assert.equal(tree.online, "0-7\n");
    assert.equal(Object.keys(tree).length, 5 + 8 * 2 + 16 * 2);
    // A machine with more CPUs than the seed: one node of its first 16.
    const big = topologyTree(seedMachine(), parseCpuList("0-31"));
    assert.equal(big.online, "0\n");
    assert.equal(big["node0/cpu15/topology/core_id"], "15\n");
    assert.equal(big["node0/cpu16/topology/core_id"], undefined);
    assert.throws(() => topologyTree(seedMachine(), []), /no online CPU/);
  });

  it("reads a sysfs CPU list, refusing anything else", () => {
    assert.deepEqual(parseCpuList("0-2,5\n"), [0, 1, 2, 5]);
    assert.throws(() => parseCpuList("0-a"), /^Error: "0-a" is not a CPU list \(e\.g\. 0-1,4\)$/);
  });

  it("shows this machine's meminfo with the seed's MemTotal, every other line as it was", () => {
    assert.equal(
      seedMeminfo(MEMINFO, seedMachine()),
      "MemTotal:       67108864 kB\nMemFree:         1000000 kB\nSwapTotal:             0 kB\n",
    );
    assert.throws(() => seedMeminfo("MemFree: 1 kB\n", seedMachine()), /no MemTotal line/);
  });
});
