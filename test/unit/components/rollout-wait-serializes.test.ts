import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { waitForTemplate } from "../../../components/rollout/wait";

/**
 * `up`'s wait runs in a Pulumi dynamic provider, whose code Pulumi serializes with everything it
 * captures (components/rollout-ready.ts). Some valid JavaScript cannot be serialized (a closure over
 * a variable declared after it): this catches it without a cluster.
 */
describe("up's wait as a dynamic provider's code", () => {
  it("serializes with the cluster client it captures", async () => {
    const serialized = await pulumi.runtime.serializeFunction(() => waitForTemplate);
    // The watch's request, captured by value: the module travels with the provider.
    assert.match(serialized.text, /allowWatchBookmarks/);
  });
});
