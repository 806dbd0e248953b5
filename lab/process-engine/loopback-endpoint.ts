import * as net from "node:net";
import { splice } from "../emulation";

/**
 * One of the process engine's endpoints on 127.0.0.1 (lab/process-engine/service-routes.ts): a TCP listener that
 * forwards each connection to the current server's loopback port, or refuses it while no vLLM pod
 * serves.
 */
export class LoopbackEndpoint {
  private target: number | undefined;
  private readonly server: net.Server;

  constructor(private readonly port: number) {
    this.server = net.createServer({ allowHalfOpen: true }, (client) => {
      if (this.target === undefined) {
        client.destroy();
        return;
      }
      splice(client, net.connect({ port: this.target, host: "127.0.0.1", allowHalfOpen: true }));
    });
  }

  /** Listens on 127.0.0.1 and resolves with the port (the given one, or the one picked for 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  /** Points the endpoint at a server's loopback port, or at nothing. */
  route(target: number | undefined): void {
    this.target = target;
  }

  close(): void {
    this.server.close();
  }
}
