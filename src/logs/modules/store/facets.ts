import { isJsonScalarLiteral, type FieldRef } from '../query/fields.js';
import type { AttributeValue } from './log-store.js';
import type { Condition } from '../query/condition.js';
import type { PreparedEntry } from './write-batch.js';

/**
 * Facets: `field = value` facts of an entry that the full-text index holds beside the message's
 * words (SQLite: the `facets` column of the tenant's FTS5 table; PostgreSQL: lexemes of the
 * tsvector), so that `http.status_code:503 level:error` is an index lookup like a word, not a check of
 * every row of the range (docs/log-store.md, "Facets").
 *
 * Each distinct value of a field gets a number in the tenant's facet dictionary
 * (log_facet_values), and the index holds the short token `f<number in base 36>`: tokens of the
 * field name and value themselves made FTS5 insertion three times as slow. An attribute's value is
 * its JSON text (`"500"` for a string, `500` for a number), exactly what the row check compares, so a
 * lookup finds what a check would. Only values a lookup can answer exactly are faceted: strings,
 * booleans and safe integers up to MAX_FACET_LENGTH characters. A field with more than
 * MAX_FACET_VALUES values in a tenant (request ids, user ids) is no longer faceted from then on
 * (log_unfaceted_fields): its tokens would grow the index by one per entry for lookups that a row
 * check does as well.
 */

/** Longest field name and value text (JSON for attributes) that is faceted. */
export const MAX_FACET_LENGTH = 64;
/** Distinct values of one field in one tenant beyond which it is not faceted. */
export const MAX_FACET_VALUES = 1_000;
/** The columns that are faceted; trace and span ids are as many as the entries. */
export const FACET_COLUMNS = ['level', 'service', 'host'] as const;
/** A token no entry holds: what an equality with a value the dictionary has never seen looks up. */
export const NO_FACET = 'g0';

/** A field's value in the facet dictionary: `c:level` / `a:http.status_code`, and the value's text. */
export interface FacetValue {
  field: string;
  value: string;
}

export interface FacetDictionaryRow extends FacetValue {
  token: number;
}

/** The index token of a dictionary number. */
export function facetToken(token: number): string {
  return `f${token.toString(36)}`;
}

/** A facet token as a PostgreSQL lexeme: behind `=`, so that no word of a message (letters and digits) can be one. */
export function postgresFacet(token: string): string {
  return `=${token}`;
}

/** The key of a faceted field: `c:level`, `a:http.status_code` (log_unfaceted_fields.field). */
export function facetField(field: Exclude<FieldRef, { kind: 'timestamp' | 'message' }>): string {
  return field.kind === 'column' ? `c:${field.column}` : `a:${field.name}`;
}

const facetable = (field: string, text: string): boolean => field.length <= MAX_FACET_LENGTH + 2 && text.length <= MAX_FACET_LENGTH;

/** An attribute value's JSON text when it can be faceted, else null (floats, long values). */
function attributeText(value: AttributeValue): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : null;
  return JSON.stringify(value);
}

const COLUMN_KEYS = FACET_COLUMNS.map((column) => `c:${column}`);

/** One field's values in a tenant's dictionary: value text -> index token. */
type FieldTokens = Map<string, string>;

interface TenantFacets {
  fields: Map<string, FieldTokens>;
  unfaceted: Set<string>;
  next: number;
}

/** `a:` + an attribute's name, made once per name (entries repeat their attribute names). */
const attributeKeys = new Map<string, string>();
function attributeKey(name: string): string {
  let key = attributeKeys.get(name);
  if (key === undefined) {
    key = `a:${name}`;
    if (attributeKeys.size < 100_000) attributeKeys.set(name, key);
  }
  return key;
}

/**
 * The facet dictionary as a writer keeps it: loaded once per tenant (`load`), extended by each batch
 * (`facetsOf` reports the new values and the fields that stop being faceted, which the batch's
 * transaction stores) and told once the batch committed (`remember`); until then nothing a rolled
 * back batch saw is kept.
 */
export class FacetDictionary {
  readonly #tenants = new Map<string, TenantFacets>();

  isLoaded(tenantId: string): boolean {
    return this.#tenants.has(tenantId);
  }

  /** The first dictionary number this writer has not seen for the tenant (rows from it on are news). */
  nextToken(tenantId: string): number {
    return this.#tenants.get(tenantId)?.next ?? 0;
  }

  /**
   * Changes whenever the tenant's dictionary does (values and unfaceted fields are only ever added):
   * facets taken under one state hold while it lasts. Undefined until the dictionary is loaded.
   */
  stateOf(tenantId: string): string | undefined {
    const known = this.#tenants.get(tenantId);
    return known && `${known.next}:${known.unfaceted.size}`;
  }

  load(tenantId: string, rows: readonly FacetDictionaryRow[], unfaceted: readonly string[]): void {
    const facets: TenantFacets = { fields: new Map(), unfaceted: new Set(unfaceted), next: 0 };
    this.#tenants.set(tenantId, facets);
    this.remember(tenantId, rows, []);
  }

  /** The index tokens of each entry, the dictionary rows the batch adds and the fields it stops faceting. */
  facetsOf(
    tenantId: string,
    entries: readonly PreparedEntry[],
  ): { facets: string[][]; newValues: FacetDictionaryRow[]; newlyUnfaceted: string[] } {
    const known = this.#tenants.get(tenantId);
    if (!known) throw new Error(`the facet dictionary of tenant ${tenantId} is not loaded`);
    const unfaceted = new Set(known.unfaceted);
    const newlyUnfaceted: string[] = [];
    for (;;) {
      const givenUp = newlyUnfaceted.length;
      const newValues: FacetDictionaryRow[] = [];
      const added = new Map<string, FieldTokens>();
      let next = known.next;
      const tokenOf = (field: string, value: string): string | null => {
        if (unfaceted.has(field) || !facetable(field, value)) return null;
        const token = known.fields.get(field)?.get(value) ?? added.get(field)?.get(value);
        if (token !== undefined) return token;
        let fresh = added.get(field);
        if (!fresh) added.set(field, (fresh = new Map<string, string>()));
        if ((known.fields.get(field)?.size ?? 0) + fresh.size >= MAX_FACET_VALUES) {
          unfaceted.add(field);
          newlyUnfaceted.push(field);
          return null;
        }
        const number = next++;
        const text = facetToken(number);
        fresh.set(value, text);
        newValues.push({ field, value, token: number });
        return text;
      };
      const facets = entries.map((entry) => {
        const tokens: string[] = [];
        for (let index = 0; index < FACET_COLUMNS.length; index += 1) {
          const value = entry[FACET_COLUMNS[index]!];
          const token = value === null ? null : tokenOf(COLUMN_KEYS[index]!, value);
          if (token !== null) tokens.push(token);
        }
        const attributes = entry.attributes;
        for (const name in attributes) {
          const key = attributeKey(name);
          // A field given up (an `_id`, say): its value's text is not even made.
          if (unfaceted.has(key)) continue;
          const text = attributeText(attributes[name]!);
          const token = text === null ? null : tokenOf(key, text);
          if (token !== null) tokens.push(token);
        }
        return tokens;
      });
      // A field given up part-way through the batch: once more, so that every entry of it is alike.
      if (newlyUnfaceted.length === givenUp) return { facets, newValues, newlyUnfaceted };
    }
  }

  remember(tenantId: string, newValues: readonly FacetDictionaryRow[], newlyUnfaceted: readonly string[]): void {
    const known = this.#tenants.get(tenantId);
    if (!known) return;
    for (const row of newValues) {
      let tokens = known.fields.get(row.field);
      if (!tokens) known.fields.set(row.field, (tokens = new Map<string, string>()));
      tokens.set(row.value, facetToken(row.token));
      known.next = Math.max(known.next, row.token + 1);
    }
    for (const field of newlyUnfaceted) known.unfaceted.add(field);
  }
}

/**
 * The facet values any of which an entry must have for `field:value` to hold, or null when facets
 * cannot answer it exactly (the field is unfaceted, the value too long, or a number the index does
 * not hold, such as `1.5` or `1e3`). Mirrors the row checks of the compilers: a column equals the
 * text; an attribute's JSON text equals the quoted text, or the text itself when it is a JSON scalar.
 */
export function equalityFacets(
  field: Exclude<FieldRef, { kind: 'timestamp' }>,
  value: string,
  unfaceted: ReadonlySet<string>,
): FacetValue[] | null {
  if (field.kind === 'message') return null;
  if (field.kind === 'column' && !(FACET_COLUMNS as readonly string[]).includes(field.column)) return null;
  const key = facetField(field);
  if (unfaceted.has(key)) return null;
  const texts = field.kind === 'column' ? [value] : [JSON.stringify(value)];
  if (field.kind === 'attribute' && isJsonScalarLiteral(value)) {
    // Only the JSON texts the index holds: safe integers as JSON writes them, and booleans.
    const canonical = value === 'true' || value === 'false' || (Number.isSafeInteger(Number(value)) && String(Number(value)) === value);
    if (!canonical) return null;
    texts.push(value);
  }
  return texts.every((text) => facetable(key, text)) ? texts.map((text) => ({ field: key, value: text })) : null;
}

/**
 * What a compiler needs to know of a tenant's facets: fields that are not faceted, and the token of
 * each value the query names (NO_FACET for a value no entry has).
 */
export interface FacetLookup {
  unfaceted: ReadonlySet<string>;
  tokenOf: (facet: FacetValue) => string;
}

/** Every facet value an equality of the condition could look up (for one dictionary read per query). */
export function facetValuesOf(condition: Condition): FacetValue[] {
  if (condition.kind === 'equals') return equalityFacets(condition.field, condition.value, new Set()) ?? [];
  if (condition.kind === 'and' || condition.kind === 'or') return condition.children.flatMap(facetValuesOf);
  if (condition.kind === 'not') return facetValuesOf(condition.child);
  return [];
}

/** A FacetLookup over dictionary rows read for a query. */
export function facetLookup(unfaceted: ReadonlySet<string>, rows: readonly FacetDictionaryRow[]): FacetLookup {
  const keyOf = (field: string, value: string): string => `${field}\u0000${value}`;
  const tokens = new Map(rows.map((row) => [keyOf(row.field, row.value), row.token]));
  return {
    unfaceted,
    tokenOf: (facet) => {
      const token = tokens.get(keyOf(facet.field, facet.value));
      return token === undefined ? NO_FACET : facetToken(token);
    },
  };
}
