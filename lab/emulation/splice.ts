import type * as net from "node:net";

/**
 * Joins a client's socket to a server's, both ways, as a TCP proxy should: half-closes pass through
 * (a client's FIN after its request still gets the whole response).
 *
 * A client that leaves mid-response (the benchmark cuts in-flight streams at a window's end) does not
 * cut the server's side: the rest of that response is read and dropped, and the server gets a FIN so
 * it closes the connection after it. llm-d-inference-sim needs this: when a streamed write fails, its
 * stream writer calls `ctx.Error(500)` on a fasthttp RequestCtx that fasthttp has already recycled for
 * another connection's request, so an unrelated request answers HTTP 500 with its own valid body
 * (issue 10, item 9). vLLM behind a real Service sees the reset and aborts the request; the simulator
 * only generates on, so draining costs the lab nothing it would not spend anyway.
 */
export function splice(client: net.Socket, server: net.Socket): void {
  let clientGone = false;
  client.pipe(server);
  server.on("data", (chunk: Buffer) => {
    if (clientGone) return;
    if (!client.write(chunk)) {
      server.pause();
      client.once("drain", () => server.resume());
    }
  });
  server.on("end", () => {
    if (!clientGone) client.end();
  });
  const clientLeft = () => {
    if (clientGone) return;
    clientGone = true;
    client.destroy();
    server.resume();
    server.end();
  };
  client.on("error", clientLeft);
  client.on("close", clientLeft);
  const serverFailed = () => {
    server.destroy();
    client.destroy();
  };
  server.on("error", serverFailed);
  server.on("close", () => client.destroy());
}
