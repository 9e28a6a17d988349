/**
 * A listener the outbound-address guard must never let a request reach: tests point a URL at it and
 * then read how many connections it was offered.
 */
import { createServer, type Server, type Socket } from "node:net";

/** Listens on 127.0.0.1 and ::1 (same port) and counts every connection it is offered. */
export async function startTrap(): Promise<{
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const onConnection = (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.destroy();
  };
  const servers: Server[] = [];
  const listen = (host: string, port: number) =>
    new Promise<Server | undefined>((resolve) => {
      const server = createServer(onConnection);
      server.once("error", () => resolve(undefined));
      server.listen(port, host, () => resolve(server));
    });
  const first = await listen("127.0.0.1", 0);
  if (!first) throw new Error("cannot listen on 127.0.0.1");
  servers.push(first);
  const address = first.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const second = await listen("::1", port);
  if (second) servers.push(second);
  return {
    port,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
