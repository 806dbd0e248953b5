import type * as net from "node:net";

/** Joins two sockets both ways; either side failing closes both. */
export function splice(a: net.Socket, b: net.Socket): void {
  a.pipe(b).pipe(a);
  const close = () => {
    a.destroy();
    b.destroy();
  };
  a.on("error", close);
  b.on("error", close);
}
