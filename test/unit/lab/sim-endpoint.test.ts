import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { request } from "undici";
import { SimEndpoint } from "../../../lab/sim-endpoint";

describe("lab: the 127.0.0.1 endpoint in front of a namespaced simulator", () => {
  const socket = path.join(os.tmpdir(), `sim-endpoint-test-${process.pid}.sock`);
  let upstream: http.Server;
  let endpoint: SimEndpoint;
  let port = 0;

  before(async () => {
    fs.rmSync(socket, { force: true });
    upstream = http.createServer((req, res) => res.end(`served ${req.url}`));
    await new Promise<void>((resolve) => upstream.listen(socket, resolve));
    endpoint = new SimEndpoint(0);
    port = await endpoint.listen();
  });
  after(() => {
    endpoint.close();
    upstream.close();
  });

  it("refuses connections while no simulator is routed", async () => {
    endpoint.route(undefined);
    await assert.rejects(request(`http://127.0.0.1:${port}/health`), /other side closed|ECONNRESET|socket hang up/i);
  });

  it("forwards HTTP to the routed simulator's socket", async () => {
    endpoint.route(socket);
    const res = await request(`http://127.0.0.1:${port}/v1/models`);
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), "served /v1/models");
  });
});
