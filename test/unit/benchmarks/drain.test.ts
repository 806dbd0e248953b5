import * as assert from "node:assert/strict";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { waitForIdle } from "../../../benchmarks/phases/drain";
import { ApiClient } from "../../../measure/http/client";

/** A /metrics endpoint on loopback that reports the given running/waiting gauges, one pair per poll. */
async function metricsServer(sequence: Array<[number, number] | null>) {
  let polls = 0;
  const server = http.createServer((_req, res) => {
    const entry = sequence[Math.min(polls, sequence.length - 1)];
    polls++;
    res.end(
      entry === null || entry === undefined
        ? "# no vllm gauges here\nprocess_cpu_seconds_total 1\n"
        : `vllm:num_requests_running{model_name="m"} ${entry[0]}\nvllm:num_requests_waiting{model_name="m"} ${entry[1]}\n`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, polls: () => polls, close: () => server.close() };
}

describe("waiting for the server to go idle between load levels", () => {
  const signal = new AbortController().signal;

  it("polls until nothing runs or waits, then reports how long it waited", async () => {
    const fake = await metricsServer([
      [2, 1],
      [1, 0],
      [0, 0],
    ]);
    const idle = await waitForIdle(new ApiClient({ endpoint: fake.url }), `${fake.url}/metrics`, "m", 10_000, signal);
    fake.close();
    assert.equal(fake.polls(), 3);
    assert.equal(idle.reason, null);
    assert.equal(typeof idle.value, "number");
  });

  it("says the server is still busy when it never drains within the limit", async () => {
    const fake = await metricsServer([[1, 0]]);
    const idle = await waitForIdle(new ApiClient({ endpoint: fake.url }), `${fake.url}/metrics`, "m", 500, signal);
    fake.close();
    assert.deepEqual(idle, { value: null, reason: "server still busy after 0.5 s" });
  });

  it("is null with a reason when the gauges are not exported", async () => {
    const fake = await metricsServer([null]);
    const idle = await waitForIdle(new ApiClient({ endpoint: fake.url }), `${fake.url}/metrics`, "m", 10_000, signal);
    fake.close();
    assert.deepEqual(idle, { value: null, reason: `running/waiting gauges not exported by ${fake.url}/metrics` });
  });
});
