import * as assert from "node:assert/strict";
import { compileExpectation } from "../../../review/stack-review";

describe("review: will the new pod compile or load its graphs", () => {
  it("loads only a config measured before on the shared claim with compileCache claim", () => {
    assert.deepEqual(compileExpectation({ cacheMode: "warm", compileCache: "claim" }, true), {
      will: "load",
      why: "this config started before on the shared claim, whose compile cache holds its graphs",
    });
    assert.deepEqual(compileExpectation({ cacheMode: "warm", compileCache: "claim" }, false), {
      will: "compile",
      why: "first start of this config: its graphs are not in the claim's compile cache yet",
    });
    assert.deepEqual(compileExpectation({ cacheMode: "cold", compileCache: "claim" }, true), {
      will: "compile",
      why: "a cold start: the fresh claim holds no compiled graphs",
    });
    assert.deepEqual(compileExpectation({ cacheMode: "warm", compileCache: "none" }, true), {
      will: "compile",
      why: "compileCache none: every start compiles",
    });
  });
});
