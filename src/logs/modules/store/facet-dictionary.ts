import type { CompiledQuery, Kysely } from 'kysely';
import { facetLookup, facetValuesOf, type FacetDictionary, type FacetDictionaryRow, type FacetLookup } from './facets.js';
import type { Condition } from '../query/condition.js';

/** Rows per insert statement: well under either database's limit on bound parameters. */
const CHUNK = 1_000;

/** Loads a tenant's facet dictionary into the writer's cache, once (inside the write transaction). */
export async function loadFacetDictionary(db: Kysely<any>, tenantId: string, dictionary: FacetDictionary): Promise<void> {
  if (dictionary.isLoaded(tenantId)) return;
  const values = await db.selectFrom('log_facet_values').select(['field', 'value', 'token']).where('tenant_id', '=', tenantId).execute();
  const unfaceted = await db.selectFrom('log_unfaceted_fields').select('field').where('tenant_id', '=', tenantId).execute();
  dictionary.load(
    tenantId,
    values.map((row) => ({ field: row.field as string, value: row.value as string, token: Number(row.token) })),
    unfaceted.map((row) => row.field as string),
  );
}

/**
 * Learns what other writers committed to a tenant's dictionary since the cache was loaded: values
 * numbered from the cache's next number on, and the unfaceted fields. A writer that is about to add
 * values calls it while holding the tenant's dictionary lock, so numbers are never given twice.
 */
export async function refreshFacetDictionary(db: Kysely<any>, tenantId: string, dictionary: FacetDictionary): Promise<void> {
  const values = await db
    .selectFrom('log_facet_values')
    .select(['field', 'value', 'token'])
    .where('tenant_id', '=', tenantId)
    .where('token', '>=', dictionary.nextToken(tenantId))
    .execute();
  const unfaceted = await db.selectFrom('log_unfaceted_fields').select('field').where('tenant_id', '=', tenantId).execute();
  dictionary.remember(
    tenantId,
    values.map((row) => ({ field: row.field as string, value: row.value as string, token: Number(row.token) })),
    unfaceted.map((row) => row.field as string),
  );
}

/** Stores what a batch added to the dictionary, in the batch's transaction. */
export async function storeFacetDictionary(
  db: Kysely<any>,
  tenantId: string,
  newValues: readonly FacetDictionaryRow[],
  newlyUnfaceted: readonly string[],
): Promise<void> {
  for (const write of facetDictionaryWrites(db, tenantId, newValues, newlyUnfaceted)) await db.executeQuery(write);
}

/** The statements of storeFacetDictionary, for a list of writes (the SQLite thread's runInOrder). */
export function facetDictionaryWrites(
  db: Kysely<any>,
  tenantId: string,
  newValues: readonly FacetDictionaryRow[],
  newlyUnfaceted: readonly string[],
): CompiledQuery[] {
  const writes: CompiledQuery[] = [];
  for (let start = 0; start < newValues.length; start += CHUNK) {
    writes.push(
      db
        .insertInto('log_facet_values')
        .values(newValues.slice(start, start + CHUNK).map((row) => ({ tenant_id: tenantId, ...row })))
        .compile(),
    );
  }
  if (newlyUnfaceted.length > 0) {
    writes.push(
      db
        .insertInto('log_unfaceted_fields')
        .values(newlyUnfaceted.map((field) => ({ tenant_id: tenantId, field })))
        .onConflict((conflict) => conflict.doNothing())
        .compile(),
    );
  }
  return writes;
}

/** The tenant's unfaceted fields and the tokens of the values a query's equalities name. */
export async function readFacetLookup(db: Kysely<any>, tenantId: string, condition: Condition): Promise<FacetLookup> {
  const unfaceted = await db.selectFrom('log_unfaceted_fields').select('field').where('tenant_id', '=', tenantId).execute();
  const wanted = facetValuesOf(condition);
  const rows =
    wanted.length === 0
      ? []
      : await db
          .selectFrom('log_facet_values')
          .select(['field', 'value', 'token'])
          .where('tenant_id', '=', tenantId)
          .where((where) =>
            where.or(wanted.map((facet) => where.and([where('field', '=', facet.field), where('value', '=', facet.value)]))),
          )
          .execute();
  return facetLookup(
    new Set(unfaceted.map((row) => row.field as string)),
    rows.map((row) => ({ field: row.field as string, value: row.value as string, token: Number(row.token) })),
  );
}
