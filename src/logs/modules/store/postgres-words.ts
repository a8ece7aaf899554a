import { sql, type Kysely } from 'kysely';
import { storedWords } from './tokenize.js';

/** Messages whose tokens are written per statement by the migration. */
const BATCH = 5_000;

/**
 * The PostgreSQL half of migration 0180: the tokens of every stored message that is not plain
 * (isPlainMessage: other scripts, marks, over-long runs), space-joined in `words`, as ingestion
 * stores them, so that the message checks of compile-postgres.ts find them. One partition at a time;
 * SQL only narrows the messages to read (a superset of the ones that are not plain), JavaScript decides.
 */
export async function storeWords(db: Kysely<any>): Promise<void> {
  const { rows: partitions } = await sql<{ name: string }>`SELECT c.relname AS name FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'log_entries'::regclass ORDER BY 1`.execute(db);
  for (const { name } of partitions) {
    const table = sql.table(name);
    let after = { tenant: '', ts: Number.MIN_SAFE_INTEGER, id: 0 };
    for (;;) {
      const { rows } = await sql<{
        tenant_id: string;
        ts: string;
        id: string;
        message: string;
      }>`SELECT tenant_id, ts::text, id::text, message
        FROM ${table} WHERE (tenant_id, ts, id) > (${after.tenant}, ${after.ts}::bigint, ${after.id}::bigint)
          AND (message !~ '^[\\x01-\\x7f]*$' OR length(message) >= 32766 OR message ~ '[A-Za-z0-9]{201}')
        ORDER BY tenant_id, ts, id LIMIT ${BATCH}`.execute(db);
      if (rows.length === 0) break;
      const updates = rows.flatMap((row) => {
        const words = storedWords(row.message);
        return words === null ? [] : [{ tenant: row.tenant_id, ts: Number(row.ts), id: Number(row.id), words }];
      });
      if (updates.length > 0) {
        await sql`UPDATE ${table} l SET words = r.words
          FROM json_to_recordset(${JSON.stringify(updates)}::json) AS r(tenant text, ts bigint, id bigint, words text)
          WHERE l.tenant_id = r.tenant AND l.ts = r.ts AND l.id = r.id`.execute(db);
      }
      const last = rows.at(-1)!;
      after = { tenant: last.tenant_id, ts: Number(last.ts), id: Number(last.id) };
    }
  }
}
