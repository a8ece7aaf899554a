/**
 * Where PostgreSQL's ingest time goes: the server's and this process's CPU an event for
 * inserting the store's rows (prepared as the store prepares them: words as a tsvector literal,
 * attributes as JSON text) into one table with the store's indexes, three ways: one bound JSON array
 * read by json_to_recordset (what the store does), one bound array per column read by unnest, and
 * COPY in text format; each with and without the GIN index of words. The table is made and dropped
 * here (`gerbang_ingest_cost`), nothing else in the database is touched.
 *   node --import tsx bench/logs-store/pg-ingest-cost.ts --url postgres://... [--events 50000]
 * Results go to docs/benchmarks.md by hand ("PostgreSQL ingest: where the time goes").
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { tsvectorText } from '../../src/logs/db/migrations/support/postgres-refacet.js';
import { tokenize } from '../../src/logs/modules/query/tokenize.js';
import { prepareEntries } from '../../src/logs/modules/store/write-batch.js';
import { generateEvents } from './generate.js';

const { values: args } = parseArgs({ options: { url: { type: 'string' }, events: { type: 'string', default: '50000' } } });
if (!args.url) throw new Error('--url postgres://... is required');
const N = Number(args.events);
const BATCH = 5_000;
const client = new pg.Client({ connectionString: args.url });
await client.connect();
const rows = prepareEntries([...generateEvents(N, 7)]).map((entry) => ({
  ...entry,
  attributes: JSON.stringify(entry.attributes),
  search: tsvectorText(tokenize(entry.message)),
}));
type Row = (typeof rows)[number];
const COLUMNS = 'tenant_id, ts, level, service, host, trace_id, span_id, message, attributes, search';

/** COPY's text format: \N for NULL; backslash, tab, newline and carriage return escaped. */
const copyField = (value: string | number | null): string =>
  value === null ? '\\N' : String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!);

const ways: Record<string, (batch: Row[]) => Promise<unknown>> = {
  json_to_recordset: (batch) =>
    client.query(
      `INSERT INTO gerbang_ingest_cost (${COLUMNS}) SELECT 't', r.ts, r.level, r.service, r.host, r.trace_id, r.span_id, r.message,
        r.attributes::jsonb, r.search::tsvector FROM json_to_recordset($1::json) AS r(ts bigint, level text, service text, host text,
        trace_id text, span_id text, message text, attributes text, search text)`,
      [JSON.stringify(batch)],
    ),
  unnest: (batch) =>
    client.query(
      `INSERT INTO gerbang_ingest_cost (${COLUMNS}) SELECT 't', r.ts, r.level, r.service, r.host, r.trace_id, r.span_id, r.message,
        r.attributes::jsonb, r.search::tsvector FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
        $7::text[], $8::text[], $9::text[]) AS r(ts, level, service, host, trace_id, span_id, message, attributes, search)`,
      (['ts', 'level', 'service', 'host', 'trace_id', 'span_id', 'message', 'attributes', 'search'] as const).map((column) =>
        batch.map((row) => row[column]),
      ),
    ),
  copy: async (batch) => {
    let text = '';
    for (const r of batch) {
      text += `t\t${r.ts}\t${[r.level, r.service, r.host, r.trace_id, r.span_id, r.message, r.attributes, r.search].map(copyField).join('\t')}\n`;
    }
    await pipeline(Readable.from([text]), client.query(copyFrom(`COPY gerbang_ingest_cost (${COLUMNS}) FROM STDIN`)));
  },
};

/** CPU time (user + system) of a process, in microseconds (Linux /proc; the server runs here). */
function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
const { rows: backend } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
const serverPid = backend[0]!.pid;

for (const gin of [true, false]) {
  for (const [name, insert] of Object.entries(ways)) {
    await client.query('DROP TABLE IF EXISTS gerbang_ingest_cost');
    await client.query(`CREATE TABLE gerbang_ingest_cost (id bigserial NOT NULL, tenant_id text NOT NULL, ts bigint NOT NULL, level text,
      service text, host text, trace_id text, span_id text, message text NOT NULL, attributes jsonb NOT NULL, search tsvector NOT NULL)`);
    await client.query('CREATE INDEX ON gerbang_ingest_cost (tenant_id, ts, id)');
    if (gin) await client.query('CREATE INDEX ON gerbang_ingest_cost USING gin (search)');
    const [server0, own0, start] = [cpuUs(serverPid), process.cpuUsage(), performance.now()];
    for (let i = 0; i < N; i += BATCH) await insert(rows.slice(i, i + BATCH));
    const seconds = (performance.now() - start) / 1000;
    const own = process.cpuUsage(own0);
    process.stdout.write(
      `${name.padEnd(18)} GIN ${gin ? 'yes' : 'no '}: ${Math.round(N / seconds)} events/s, server ${((cpuUs(serverPid) - server0) / N).toFixed(1)} µs an event, this process ${((own.user + own.system) / N).toFixed(1)} µs\n`,
    );
  }
}
await client.query('DROP TABLE IF EXISTS gerbang_ingest_cost');
await client.end();
