import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { automationDriver, findPulumi, pulumiEnv } from "../../../campaign/pulumi";
import { PROJECT_DIR } from "../helpers";

/**
 * The campaign's Automation API driver with the real Pulumi CLI and Node language host, on a
 * resource-free program (no cluster needed): stack init in a file backend with an empty
 * passphrase, per-run config that does not stay in the stack file, outputs, destroy.
 */
describe("campaign StackDriver over the Automation API (real pulumi, no cluster)", function () {
  this.timeout(5 * 60_000);
  let tmp: string;
  let workDir: string;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "campaign-driver-"));
    workDir = path.join(tmp, "project");
    fs.mkdirSync(workDir);
    fs.writeFileSync(
      path.join(workDir, "Pulumi.yaml"),
      "name: campaign-driver-test\nruntime: nodejs\nconfig:\n  campaign-driver-test:runId:\n    type: string\n    default: none\n",
    );
    fs.writeFileSync(
      path.join(workDir, "Pulumi.cold.yaml"),
      "# the repo's text\nconfig:\n  campaign-driver-test:runId: r1\n",
    );
    fs.writeFileSync(path.join(workDir, "package.json"), '{ "name": "campaign-driver-test", "main": "index.js" }\n');
    fs.writeFileSync(
      path.join(workDir, "index.js"),
      'const pulumi = require("@pulumi/pulumi");\nexports.runId = new pulumi.Config().require("runId");\nexports.args = ["m", "--max-num-seqs", "4"];\n',
    );
    fs.symlinkSync(path.join(PROJECT_DIR, "node_modules"), path.join(workDir, "node_modules"), "dir");
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("deploys with a per-run config value, returns plain outputs, restores the stack file, destroys", async () => {
    const before = fs.readFileSync(path.join(workDir, "Pulumi.cold.yaml"), "utf8");
    const envVars = pulumiEnv({ mode: "lab", backendUrl: `file://${tmp}/state`, kubeconfig: undefined }, process.env);
    fs.mkdirSync(path.join(tmp, "state"));
    const driver = automationDriver({ workDir, envVars, pulumiCommand: await findPulumi() });
    let log = "";
    const outputs = await driver.up("cold", {
      config: { "campaign-driver-test:runId": "c20261129140000" },
      log: (t) => (log += t),
    });
    assert.deepEqual(outputs, { runId: "c20261129140000", args: ["m", "--max-num-seqs", "4"] });
    assert.match(log, /Outputs:/);
    const after = fs.readFileSync(path.join(workDir, "Pulumi.cold.yaml"), "utf8");
    // The per-run value is gone again; only what stack init added (the passphrase salt) remains.
    assert.equal(after.replace(/^encryptionsalt: .*\n/m, ""), before);
    assert.deepEqual(await driver.up("cold", { log: () => {} }), { runId: "r1", args: ["m", "--max-num-seqs", "4"] });
    await driver.destroy("cold", { log: () => {} });
  });
});
