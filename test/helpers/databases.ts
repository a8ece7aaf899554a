import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DialectName } from '../../src/shared/db/database.js';

/** Every repository test runs on both. */
export const DIALECTS: readonly DialectName[] = ['sqlite', 'postgres'];

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

function postgresServerUrl(): string {
  const url = process.env.TEST_POSTGRES_URL;
  if (!url) throw new Error('TEST_POSTGRES_URL is not set: run the tests with `npm test` (it starts PostgreSQL)');
  return url;
}

/** A fresh, empty database: a SQLite file in a temp dir, or a new PostgreSQL database. */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gerbang-test-'));
    return { url: `sqlite:${join(dir, 'test.sqlite')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const server = postgresServerUrl();
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(server);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client(server);
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
