import { isJsonScalarLiteral, type FieldRef } from './fields.js';
import type { AttributeValue } from './log-store.js';
import type { PreparedEntry } from './write-batch.js';

/**
 * Facets: `field = value` facts of an entry that the full-text index holds beside the message's
 * words (SQLite: the `facets` column of the tenant's FTS5 table; PostgreSQL: lexemes of the tsvector), so
 * that `http.status_code:503 level:error` is an index lookup like a word, not a check of every row
 * of the range (docs/log-store.md, "Facets").
 *
 * A facet is one token of letters and digits: a kind letter, the field name in hex, `v`, the value in
 * hex (SQLite keeps them in a column of their own; PostgreSQL behind `=`, which no word holds). An attribute's value is its JSON text (`"500"` for a string, `500`
 * for a number), which is exactly what the row check compares, so a lookup finds what a check would.
 * Only values a lookup can answer exactly are faceted: strings, booleans and safe integers up to
 * MAX_FACET_LENGTH characters. A field with more than MAX_FACET_VALUES distinct values (request
 * ids, user ids) is no longer faceted from then on (log_unfaceted_fields): its terms would grow the
 * index by one per entry for lookups that a row check does as well.
 */

/** Longest field name and value text (JSON for attributes) that is faceted. */
export const MAX_FACET_LENGTH = 64;
/** Distinct values of one field in one tenant (seen by this process) beyond which it is not faceted. */
export const MAX_FACET_VALUES = 1_000;
/** The columns that are faceted; trace and span ids are as many as the entries. */
export const FACET_COLUMNS = ['level', 'service', 'host'] as const;

const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex');

/** A facet as a PostgreSQL lexeme: behind `=`, so that no word of a message (letters and digits) can be one. */
export function postgresFacet(facet: string): string {
  return `=${facet}`;
}

/** The key of a faceted field: `c:level`, `a:http.status_code` (log_unfaceted_fields.field). */
export function facetField(field: Exclude<FieldRef, { kind: 'timestamp' | 'message' }>): string {
  return field.kind === 'column' ? `c:${field.column}` : `a:${field.name}`;
}

function facetToken(field: string, text: string): string | null {
  if (field.length > MAX_FACET_LENGTH + 2 || text.length > MAX_FACET_LENGTH) return null;
  return `${field.startsWith('c:') ? 'c' : 'a'}${hex(field.slice(2))}v${hex(text)}`;
}

/** An attribute value's JSON text when it can be faceted, else null (floats, long values). */
function attributeText(value: AttributeValue): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? JSON.stringify(value) : null;
  return JSON.stringify(value);
}

/**
 * Which fields of which tenant are faceted: all until one shows more than MAX_FACET_VALUES distinct
 * values, then never again. `load` takes log_unfaceted_fields; `facetsOf` reports the fields a batch
 * gives up, which its transaction stores and `remember` learns once it committed (until then a field
 * the database still calls faceted keeps being faceted here).
 */
export class FacetCardinality {
  readonly #values = new Map<string, Map<string, Set<string>>>();
  readonly #unfaceted = new Map<string, Set<string>>();

  load(tenantId: string, fields: readonly string[]): void {
    this.#unfaceted.set(tenantId, new Set(fields));
  }

  isLoaded(tenantId: string): boolean {
    return this.#unfaceted.has(tenantId);
  }

  remember(tenantId: string, fields: readonly string[]): void {
    const unfaceted = this.#unfaceted.get(tenantId);
    for (const field of fields) unfaceted?.add(field);
  }

  /** The facets of each entry, and the fields this batch stops faceting. */
  facetsOf(tenantId: string, entries: readonly PreparedEntry[]): { facets: string[][]; newlyUnfaceted: string[] } {
    const unfaceted = new Set(this.#unfaceted.get(tenantId));
    let values = this.#values.get(tenantId);
    if (!values) this.#values.set(tenantId, (values = new Map<string, Set<string>>()));
    const newlyUnfaceted: string[] = [];
    const pairs = entries.map(facetPairs);
    // Cardinality first, over the whole batch, so that a field is faceted alike in every entry of it.
    for (const entryPairs of pairs) {
      for (const [field, text] of entryPairs) {
        if (unfaceted.has(field)) continue;
        let seen = values.get(field);
        if (!seen) values.set(field, (seen = new Set()));
        seen.add(text);
        if (seen.size > MAX_FACET_VALUES) {
          unfaceted.add(field);
          newlyUnfaceted.push(field);
          values.delete(field);
        }
      }
    }
    const facets = pairs.map((entryPairs) => {
      const tokens: string[] = [];
      for (const [field, text] of entryPairs) {
        const token = unfaceted.has(field) ? null : facetToken(field, text);
        if (token !== null) tokens.push(token);
      }
      return tokens;
    });
    return { facets, newlyUnfaceted };
  }
}

/** [field key, value text] of an entry's faceted columns and attributes. */
function facetPairs(entry: PreparedEntry): [string, string][] {
  const pairs: [string, string][] = [];
  for (const column of FACET_COLUMNS) {
    const value = entry[column];
    if (value !== null) pairs.push([`c:${column}`, value]);
  }
  for (const name in entry.attributes) {
    const text = attributeText(entry.attributes[name]!);
    if (text !== null) pairs.push([`a:${name}`, text]);
  }
  return pairs;
}

/**
 * The facets any of which an entry must have for `field:value` to hold, or null when facets cannot
 * answer it exactly (the field is unfaceted, the value too long, or a number the index does not
 * hold, such as `1.5` or `1e3`). Mirrors the row checks of the compilers: a column equals the text;
 * an attribute's JSON text equals the quoted text, or the text itself when it is a JSON scalar.
 */
export function equalityFacets(
  field: Exclude<FieldRef, { kind: 'timestamp' }>,
  value: string,
  unfaceted: ReadonlySet<string>,
): string[] | null {
  if (field.kind === 'message') return null;
  if (field.kind === 'column' && !(FACET_COLUMNS as readonly string[]).includes(field.column)) return null;
  const key = facetField(field);
  if (unfaceted.has(key)) return null;
  if (field.kind === 'column') {
    const token = facetToken(key, value);
    return token === null ? null : [token];
  }
  const texts = [JSON.stringify(value)];
  if (isJsonScalarLiteral(value)) {
    // Only the JSON texts the index holds: safe integers as JSON writes them, and booleans.
    const canonical = value === 'true' || value === 'false' || (Number.isSafeInteger(Number(value)) && String(Number(value)) === value);
    if (!canonical) return null;
    texts.push(value);
  }
  const tokens = texts.map((text) => facetToken(key, text));
  return tokens.every((token) => token !== null) ? (tokens as string[]) : null;
}
