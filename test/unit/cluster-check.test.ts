import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { identityProblem, providerKubeConfig } from "../../components/cluster-check";

const wanted = { namespace: "gemmaforge", deploymentName: "gemma4-12b" };

describe("cluster checks before registering", () => {
  it("lets the stack's own server be", () => {
    assert.equal(identityProblem(wanted, [{ namespace: "gemmaforge", name: "gemma4-12b" }]), undefined);
    assert.equal(identityProblem(wanted, []), undefined);
  });

  it("names namespace when the running server is in another one, else deploymentName", () => {
    assert.equal(identityProblem(wanted, [{ namespace: "old", name: "gemma4-12b" }])?.key, "vllm-tuner:namespace");
    assert.equal(identityProblem(wanted, [{ namespace: "old", name: "other" }])?.key, "vllm-tuner:namespace");
    assert.equal(
      identityProblem(wanted, [{ namespace: "gemmaforge", name: "other" }])?.key,
      "vllm-tuner:deploymentName",
    );
  });

  it("reads kubernetes:kubeconfig as a path or as contents, and selects kubernetes:context", () => {
    const text =
      "apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: 'https://a:6443'}}, {name: b, cluster: {server: 'https://b:6443'}}]\n" +
      "users: [{name: u, user: {}}]\ncontexts: [{name: one, context: {cluster: a, user: u}}, {name: two, context: {cluster: b, user: u}}]\n" +
      "current-context: one\n";
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "kc-")), "config");
    fs.writeFileSync(file, text);
    for (const given of [file, text]) {
      const kc = providerKubeConfig({ "kubernetes:kubeconfig": given, "kubernetes:context": "two" });
      assert.ok(!("allowed" in kc));
      assert.equal((kc as { server: string }).server, "https://b:6443");
    }
    const wrong = providerKubeConfig({ "kubernetes:kubeconfig": file, "kubernetes:context": "tow" });
    assert.deepEqual(wrong, {
      key: "kubernetes:context",
      value: "tow",
      allowed:
        "a context of the kubeconfig; did you mean two? (contexts: one, two). Fix it with pulumi config set kubernetes:context <context>," +
        " or pulumi config rm kubernetes:context for the current one",
    });
  });
});
