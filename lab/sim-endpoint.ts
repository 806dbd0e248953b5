import * as net from "node:net";
import { splice } from "./splice";

/**
 * The lab's vLLM endpoint on 127.0.0.1: a TCP listener that forwards each connection to the
 * current simulator's Unix socket (or refuses it while no vLLM pod is running).
 */
export class SimEndpoint {
  private target: string | undefined;
  private readonly server: net.Server;

  constructor(private readonly port: number) {
    this.server = net.createServer({ allowHalfOpen: true }, (client) => {
      if (!this.target) {
        client.destroy();
        return;
      }
      splice(client, net.connect({ path: this.target, allowHalfOpen: true }));
    });
  }

  /** Listens on 127.0.0.1 and resolves with the port (the given one, or the one picked for 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  /** Points the endpoint at a simulator's socket, or at nothing. */
  route(socketPath: string | undefined): void {
    this.target = socketPath;
  }

  close(): void {
    this.server.close();
  }
}
