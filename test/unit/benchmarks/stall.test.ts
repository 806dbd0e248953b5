import { strict as assert } from "node:assert";
import { StallWatch, scrapeFailureReason, stallReason } from "../../../measure/load/stall";

/** A watch on a hand-moved clock. */
function watchAt(boundMs: number) {
  let t = 1_000_000;
  const w = new StallWatch(boundMs, () => t);
  return { w, at: (ms: number) => (t = 1_000_000 + ms) };
}

describe("StallWatch", () => {
  it("finds a silence longer than the bound with requests in flight, from its start", () => {
    const { w, at } = watchAt(1000);
    at(0);
    w.startWindow();
    w.begin();
    at(500);
    w.activity();
    at(3500);
    w.activity();
    at(3600);
    w.end();
    w.endWindow();
    assert.deepEqual(w.stalls(), [{ startEpochMs: 1_000_500, seconds: 3 }]);
  });

  it("ignores silences no longer than the bound, idle time and time outside the window", () => {
    const { w, at } = watchAt(1000);
    w.begin();
    at(5000);
    w.activity(); // before the window: not counted
    w.startWindow();
    at(6000);
    w.activity(); // exactly the bound
    w.end();
    at(9000);
    w.begin(); // idle 3 s with nothing in flight: the client's pause, not the server's
    at(9500);
    w.end();
    w.endWindow();
    assert.deepEqual(w.stalls(), []);
  });

  it("closes a silence still open when the window ends", () => {
    const { w, at } = watchAt(2000);
    w.startWindow();
    w.begin();
    at(100);
    w.activity();
    at(4100);
    w.endWindow();
    at(9000);
    w.end(); // aborted after the window: no second stall
    assert.deepEqual(w.stalls(), [{ startEpochMs: 1_000_100, seconds: 4 }]);
  });
});

describe("validity reasons", () => {
  it("says how long and from when a server stalled, and the bound", () => {
    assert.equal(stallReason([], 5), null);
    assert.equal(
      stallReason(
        [
          { startEpochMs: Date.UTC(2026, 0, 1, 0, 0, 0), seconds: 6 },
          { startEpochMs: Date.UTC(2026, 0, 1, 0, 1, 0), seconds: 10.04 },
        ],
        5,
      ),
      "server stalled: 2 times, no byte on any in-flight stream for up to 10.0 s (from 2026-01-01T00:01:00.000Z; " +
        "bound 5 s, scenario load.stallSeconds)",
    );
  });

  it("counts failed scrapes against all scrapes of the window", () => {
    const points = [1, 2, 3].map((t) => ({ tEpochMs: t, values: null }));
    const series = { url: "http://h/metrics", points, failedScrapes: 2, firstError: "timeout" };
    assert.equal(
      scrapeFailureReason("vLLM /metrics", series),
      "2 of 5 vLLM /metrics scrapes of http://h/metrics failed in the window (first: timeout)",
    );
    assert.equal(scrapeFailureReason("vLLM /metrics", { ...series, failedScrapes: 0 }), null);
  });
});
