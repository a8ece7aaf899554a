import { sql, type Kysely } from 'kysely';
import { loadFacetDictionary, storeFacetDictionary } from '../../../modules/store/facet-dictionary.js';
import { FacetDictionary, postgresFacet } from '../../../modules/store/facets.js';
import { ENTRY_COLUMNS, toStoredEntry, type EntryRow } from '../../../modules/store/store-core.js';
import { prepareEntries } from '../../../modules/store/write-batch.js';
import { byTenant, nextEntries } from './postgres-walk.js';
import type { ChunkPosition } from '../../../../shared/db/migrator.js';

/**
 * Tokens as a tsvector literal with positions ('error':1 'disk':2,5), then facets (facets.ts) as
 * lexemes without positions behind `=`, which no word can hold: what PostgreSQL's entries held in
 * `search` (0018_no_tsvector drops it; tests build such rows with it).
 */
export function tsvectorText(tokens: readonly string[], facets: readonly string[] = []): string {
  // Each token's positions as text ("2,5"), then one string: no array per token (most occur once).
  const positions = new Map<string, string>();
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    const before = positions.get(token);
    positions.set(token, before === undefined ? String(index + 1) : `${before},${index + 1}`);
  }
  let text = '';
  for (const [token, list] of positions) text += `${text === '' ? '' : ' '}'${token}':${list}`;
  for (const facet of facets) text += `${text === '' ? '' : ' '}'${postgresFacet(facet)}'`;
  return text;
}

/** Entries re-faceted per chunk (one transaction) by the migration. */
const BATCH = 5_000;

/**
 * The PostgreSQL half of 0011_time_ordered_facets: the facets (facets.ts) of every stored entry added to its
 * tsvector, as ingestion adds them to new entries, so that a facet lookup finds old entries too.
 * One chunk of BATCH entries (postgres-walk.ts); null when none is left.
 */
export async function refacetChunk(
  db: Kysely<any>,
  position: ChunkPosition | null,
): Promise<{ position: ChunkPosition; rows: number } | null> {
  const chunk = await nextEntries<EntryRow>(db, position, BATCH, ENTRY_COLUMNS);
  if (chunk === null) return null;
  const dictionary = new FacetDictionary();
  for (const { tenant, rows: own } of byTenant(chunk.rows)) {
    await loadFacetDictionary(db, tenant, dictionary);
    const { facets, newValues, newlyUnfaceted } = dictionary.facetsOf(tenant, prepareEntries(own.map(toStoredEntry)));
    const updates = own.map((row, index) => ({ id: Number(row.id), ts: Number(row.ts), facets: tsvectorText([], facets[index]) }));
    await sql`UPDATE ${sql.table(chunk.partition)} l SET search = l.search || r.facets::tsvector
      FROM json_to_recordset(${JSON.stringify(updates)}::json) AS r(id bigint, ts bigint, facets text)
      WHERE l.tenant_id = ${tenant} AND l.ts = r.ts AND l.id = r.id`.execute(db);
    await storeFacetDictionary(db, tenant, newValues, newlyUnfaceted);
    dictionary.remember(tenant, newValues, newlyUnfaceted);
  }
  return { position: chunk.position, rows: chunk.rows.length };
}
