import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP forwarder in front of a PostgreSQL server that can cut one kind of connection and keep it
 * from coming back, while every other connection passes: a network fault of the connections whose
 * startup message names `application_name` (pg's clients send it in the clear, without SSL).
 */
export interface PostgresGate {
  /** `url` with its host and port changed to the gate's. */
  url(url: string): string;
  /** Closes the open connections of `applicationName` and turns new ones away until `open`. */
  cut(applicationName: string): void;
  open(): void;
  /** How many connections of `applicationName` were turned away so far. */
  refused(applicationName: string): number;
  close(): Promise<void>;
}

export async function startPostgresGate(target: { host: string; port: number }): Promise<PostgresGate> {
  let blocked: string | undefined;
  const open = new Map<Socket, string | undefined>();
  const refusals = new Map<string, number>();
  const nameOf = (startup: Buffer) => /application_name\0([^\0]*)\0/.exec(startup.toString('latin1'))?.[1];
  const server = createServer((client) => {
    client.on('error', () => undefined);
    client.once('data', (first: Buffer) => {
      const name = nameOf(first);
      if (name !== undefined && name === blocked) {
        refusals.set(name, (refusals.get(name) ?? 0) + 1);
        client.destroy();
        return;
      }
      const upstream = connect(target);
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      upstream.write(first);
      client.pipe(upstream);
      upstream.pipe(client);
      open.set(client, name);
      client.once('close', () => open.delete(client));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut(applicationName) {
      blocked = applicationName;
      for (const [socket, name] of open) if (name === applicationName) socket.destroy();
    },
    open() {
      blocked = undefined;
    },
    refused: (applicationName) => refusals.get(applicationName) ?? 0,
    async close() {
      for (const socket of open.keys()) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
