import * as assert from "node:assert/strict";
import { parseVllmArgs, valuelessFlags, vllmFlagValue } from "../../config";

describe("parseVllmArgs: vllm serve argv read back", () => {
  it("reads the model, --flag value and --flag=value as units, keeping the tokens as written", () => {
    assert.deepEqual(parseVllmArgs(["m/x", "--max-num-seqs", "4", "--dtype=auto"]), [
      { kind: "positional", value: "m/x", tokens: ["m/x"] },
      { kind: "flag", flag: "--max-num-seqs", name: "--max-num-seqs", value: "4", tokens: ["--max-num-seqs", "4"] },
      { kind: "flag", flag: "--dtype", name: "--dtype", value: "auto", tokens: ["--dtype=auto"] },
    ]);
  });

  it("gives a boolean knob's both forms no value, so the token after them stays its own", () => {
    assert.deepEqual(parseVllmArgs(["--no-enable-prefix-caching", "m/x", "--enable-prefix-caching", "m/y"]), [
      {
        kind: "flag",
        flag: "--no-enable-prefix-caching",
        name: "--no-enable-prefix-caching",
        value: null,
        tokens: ["--no-enable-prefix-caching"],
      },
      { kind: "positional", value: "m/x", tokens: ["m/x"] },
      {
        kind: "flag",
        flag: "--enable-prefix-caching",
        name: "--enable-prefix-caching",
        value: null,
        tokens: ["--enable-prefix-caching"],
      },
      { kind: "positional", value: "m/y", tokens: ["m/y"] },
    ]);
    assert.ok(valuelessFlags().has("--enforce-eager"));
  });

  it("reads an unknown flag like any other: it takes the next token unless that is a flag", () => {
    assert.deepEqual(parseVllmArgs(["--speculative-x", "3", "--seed", "-1", "--bare", "--last"]), [
      { kind: "flag", flag: "--speculative-x", name: "--speculative-x", value: "3", tokens: ["--speculative-x", "3"] },
      { kind: "flag", flag: "--seed", name: "--seed", value: "-1", tokens: ["--seed", "-1"] },
      { kind: "flag", flag: "--bare", name: "--bare", value: null, tokens: ["--bare"] },
      { kind: "flag", flag: "--last", name: "--last", value: null, tokens: ["--last"] },
    ]);
  });

  it("names a flag as argparse reads it, `_` as `-`, and keeps the last of a repeated flag", () => {
    assert.equal(vllmFlagValue(["m", "--max_num_seqs=2"], "--max-num-seqs"), "2");
    assert.equal(vllmFlagValue(["m", "--max-num-seqs", "2", "--max-num-seqs", "8"], "--max-num-seqs"), "8");
    assert.equal(vllmFlagValue(["m", "--max-num-seqs"], "--max-num-seqs"), undefined);
    assert.equal(vllmFlagValue(["m"], "--max-num-seqs"), undefined);
  });
});
