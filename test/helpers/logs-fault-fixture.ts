import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import type { LogsSchema } from '../../src/logs/db/schema.js';
import { DEFAULT_TENANT_ID } from '../../src/logs/modules/rbac/permissions.js';
import { openDatabase, type DialectName } from '../../src/shared/db/database.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from './logs.js';
import { killHard, startLogsProcess } from './logs-process.js';
import { footprint, jsonLines, settlesBack, type ProcessFootprint } from './process-probe.js';
import { closedPort, rawRequest, type RawResponse } from './upstream.js';

/**
 * One real logs process (the CLI) on a fresh database of the dialect, for the fault suite:
 * calls that open and close their own connection (no pooled socket counts as a leak), the process's
 * log lines, and the check that follows every fault case.
 */
export interface LogsUnderFault {
  readonly port: number;
  readonly pid: number;
  readonly database: TestDatabase;
  /** `Authorization` of the administrator: a bearer token (no argon2 per call). */
  readonly admin: string;
  /** `Authorization` of the administrator as HTTP Basic, as shippers send it. */
  readonly basic: string;
  call(method: string, path: string, options?: { headers?: Record<string, string>; body?: string | Buffer }): Promise<RawResponse>;
  /** How many log entries match `query` (the search API, all of the last day). */
  count(query: string): Promise<number>;
  /** Log lines the process wrote since it started (JSON, pino). */
  logLines(): Record<string, unknown>[];
  /** Fails the test if the process exited. */
  alive(): void;
  /** After a case: the process answers /healthz and a real search, and its descriptors and memory came back near `baseline`. */
  stillServes(baseline: ProcessFootprint): Promise<void>;
  baseline(): ProcessFootprint;
  close(): Promise<void>;
}

export async function startLogsUnderFault(dialect: DialectName, env: Record<string, string> = {}): Promise<LogsUnderFault> {
  const database = await createTestDatabase(dialect);
  const port = await closedPort();
  let child: ChildProcess;
  try {
    child = await startLogsProcess(database.url, port, {
      LOGS_ACCESS_TOKEN_TTL: '1h',
      LOGS_LOGIN_RATE_PER_ADDRESS: '100000',
      LOGS_API_RATE_PER_USER: '1000000',
      LOGS_INGEST_RATE_PER_TENANT: '1000000',
      // One search worker, started below before any baseline is taken (the pool starts on demand).
      LOGS_SEARCH_WORKERS: '1',
      ...env,
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exit: string | undefined;
  child.once('exit', (code, signal) => (exit = `logs process exited (code ${code}, signal ${signal})`));

  const call: LogsUnderFault['call'] = (method, path, options = {}) => rawRequest(port, method, path, options);
  const login = await call('POST', '/api/login', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
  });
  assert.equal(login.status, 200, login.body.toString());
  const admin = `Bearer ${(JSON.parse(login.body.toString()) as { token: { access_token: string } }).token.access_token}`;

  const fixture: LogsUnderFault = {
    port,
    pid: child.pid!,
    database,
    admin,
    basic: `Basic ${Buffer.from(`${LOGS_ADMIN}:${LOGS_ADMIN_PASSWORD}`).toString('base64')}`,
    call,
    async count(query) {
      const response = await call('POST', '/api/v1/logs/list/paginate', {
        headers: { authorization: admin, 'content-type': 'application/json' },
        body: JSON.stringify({
          query,
          limit: 1,
          timeRange: { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() },
        }),
      });
      assert.equal(response.status, 200, `search ${query}: ${response.status} ${response.body.toString()}`);
      return (JSON.parse(response.body.toString()) as { total: number }).total;
    },
    logLines: () => jsonLines(output),
    alive() {
      assert.equal(exit, undefined, `${exit}\n${output.slice(-4000)}`);
    },
    async stillServes(baseline) {
      fixture.alive();
      const health = await call('GET', '/healthz');
      assert.equal(health.status, 200, health.body.toString());
      await fixture.count('nothingmatchesthisword');
      await settlesBack(fixture.pid, baseline);
      fixture.alive();
    },
    baseline: () => footprint(child.pid!),
    async close() {
      await killHard(child);
      await database.drop();
    },
  };
  // Warmed up: the read pool's worker (its thread and connection) belongs to every baseline.
  await fixture.count('warm-up');
  return fixture;
}

/**
 * Writes `count` audit rows straight into the database (as the service would record them), so an
 * export has enough to stream for a client to leave in the middle.
 */
export async function seedAuditTrail(databaseUrl: string, count: number): Promise<void> {
  const database = await openDatabase<LogsSchema>(databaseUrl);
  try {
    const start = Date.now() - count;
    for (let offset = 0; offset < count; offset += 500) {
      const rows = Array.from({ length: Math.min(500, count - offset) }, (_, i) => ({
        id: randomUUID(),
        tenant_id: DEFAULT_TENANT_ID,
        at: new Date(start + offset + i).toISOString(),
        actor_id: null,
        actor: 'seeded-operator',
        action: 'user.update',
        target_type: 'user',
        target_id: randomUUID(),
        outcome: 'success' as const,
        ip: '127.0.0.1',
        user_agent: 'fault-suite/1.0 (a long enough user agent to make each exported row a few hundred bytes)',
        request_id: randomUUID(),
        details: JSON.stringify({ note: `seeded row ${offset + i} of the fault suite's audit trail` }),
      }));
      await database.db.insertInto('logs_audit').values(rows).execute();
    }
  } finally {
    await database.close();
  }
}
