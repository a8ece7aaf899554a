/**
 * How long the upgrade from the oldest supported data directory takes (docs/operations.md, "Upgrade
 * and rollback"): `--events N` old events (test/helpers/oldest-data.ts) in a fresh database, then
 * every later migration as the service runs them (the SQLite thread for SQLite), each timed.
 *
 *   node --max-semi-space-size=64 --import tsx logs-store/upgrade.ts --events 1000000
 *   node --max-semi-space-size=64 --import tsx logs-store/upgrade.ts --events 1000000 --url postgres://…/bench
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { logsMigrations } from '../../src/logs/db/migrations/index.js';
import { openDatabase } from '../../src/shared/db/database.js';
import { sqliteThreadDialect } from '../../src/logs/modules/store/index.js';
import { migrateToLatest } from '../../src/shared/db/migrator.js';
import { insertOldEvents, migrateAsOlderVersion, OLDEST_LOGS_HISTORY } from '../../test/helpers/oldest-data.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, url: { type: 'string' } } });
const events = Number(values.events);
const dir = values.url ? undefined : mkdtempSync(join(tmpdir(), 'gerbang-upgrade-'));
const url = values.url ?? `sqlite:${join(dir!, 'logs.sqlite')}`;
const dialect = url.startsWith('sqlite:') ? 'sqlite' : 'postgres';

const old = await openDatabase<any>(url);
await migrateAsOlderVersion(old.db, logsMigrations, 'logs', OLDEST_LOGS_HISTORY);
await insertOldEvents(old.db, dialect, 'default', events);
await old.close();

const database = await openDatabase<any>(url, { sqliteThread: sqliteThreadDialect });
const timings: Record<string, number> = {};
const started = Date.now();
await migrateToLatest(database.db, logsMigrations, 'logs', {
  log: {
    info(fields: { migration?: string; ms?: number }, message: string) {
      if (message === 'migration applied' && fields.migration && fields.ms !== undefined) timings[fields.migration] = fields.ms;
    },
  },
});
const totalMs = Date.now() - started;
await database.close();
if (dir) rmSync(dir, { recursive: true, force: true });
const slow = Object.fromEntries(Object.entries(timings).filter(([, ms]) => ms >= 100));
process.stdout.write(
  `${JSON.stringify({ date: new Date().toISOString().slice(0, 10), dialect, events, totalMs, perMillionS: Math.round((totalMs / events) * 10_000) / 10, slow })}\n`,
);
