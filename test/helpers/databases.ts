import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pg from 'pg';
import type { DialectName } from '../../src/shared/db/database.js';

/**
 * Every repository test runs on both; `TEST_DIALECTS` (comma-separated) narrows the loop, e.g.
 * `TEST_DIALECTS=sqlite` for `npm run test:fast` (docs/testing.md), which starts no PostgreSQL.
 */
export const DIALECTS: readonly DialectName[] = testedDialects(process.env.TEST_DIALECTS);

function testedDialects(setting: string | undefined): DialectName[] {
  if (setting === undefined || setting.trim() === '') return ['sqlite', 'postgres'];
  const names = setting.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => name !== 'sqlite' && name !== 'postgres');
  if (unknown.length > 0) throw new Error(`TEST_DIALECTS: ${unknown.join(', ')} is not sqlite or postgres`);
  return (['sqlite', 'postgres'] as const).filter((dialect) => names.includes(dialect));
}

/**
 * `describe` for a block about PostgreSQL alone: declared only when PostgreSQL is among DIALECTS
 * (a run on SQLite alone has no such tests rather than skipped ones).
 */
export function describeOnPostgres(name: string, block: () => void): void {
  if (DIALECTS.includes('postgres')) void describe(name, block);
}

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
