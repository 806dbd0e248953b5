import * as net from "node:net";
import { splice } from "./splice";

/** Where the endpoint forwards: a Unix socket path, or a port on 127.0.0.1. */
export type EndpointTarget = string | number;

/**
 * The lab's vLLM endpoint on 127.0.0.1: a TCP listener that forwards each connection to the
 * current server, a simulator's Unix socket or a real vLLM's loopback port (or refuses it while
 * no vLLM pod is running).
 */
export class SimEndpoint {
  private target: EndpointTarget | undefined;
  private readonly server: net.Server;

  constructor(private readonly port: number) {
    this.server = net.createServer({ allowHalfOpen: true }, (client) => {
      if (!this.target) {
        client.destroy();
        return;
      }
      const target = this.target;
      splice(
        client,
        typeof target === "number"
          ? net.connect({ port: target, host: "127.0.0.1", allowHalfOpen: true })
          : net.connect({ path: target, allowHalfOpen: true }),
      );
    });
  }

  /** Listens on 127.0.0.1 and resolves with the port (the given one, or the one picked for 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.port, "127.0.0.1", () => resolve((this.server.address() as net.AddressInfo).port));
    });
  }

  /** Points the endpoint at a server, or at nothing. */
  route(target: EndpointTarget | undefined): void {
    this.target = target;
  }

  close(): void {
    this.server.close();
  }
}
