import { sql, type Kysely } from 'kysely';
import type { AttributeValue, StoredLogEntry } from './log-store.js';
import { toStoredEntry, type EntryRow } from './store-core.js';
import { dict } from '../../../shared/dict.js';

/**
 * Attribute names by number (both dialects; docs/log-store.md, "Rows"): a row stores its attributes with
 * each name replaced by the tenant's number for it in base 36, `{"0":"GET","1":"/api/v1/x"}`
 * instead of `{"http.method":"GET","http.route":"/api/v1/x"}`: names are a large share of a row
 * (docs/performance-notes.md, "SQLite store"). The numbers (log_attribute_codes) are given by the writer
 * as names first arrive and never change, so a number read once stays right.
 *
 * A tenant gets at most MAX_ATTRIBUTE_CODES numbers: names that arrive after that (a sender that
 * puts ids in names) are stored as `~` + the name, and only so, since the tenant never gets a number
 * again. A stored key is therefore either a number (base-36 digits) or `~name`, never both for one name.
 */

/** Numbers of at most two base-36 digits. */
export const MAX_ATTRIBUTE_CODES = 36 * 36;

interface TenantCodes {
  /** Name -> its key as it opens a JSON member: `"1a":`. */
  members: Map<string, string>;
  /** Number -> name. */
  names: string[];
}

export interface AttributeCodeRow {
  name: string;
  code: number;
}

export class AttributeCodes {
  readonly #tenants = new Map<string, TenantCodes>();

  /** How many numbers the cache holds for the tenant; undefined before it was loaded. */
  countOf(tenantId: string): number | undefined {
    return this.#tenants.get(tenantId)?.names.length;
  }

  /**
   * Loads the tenant's numbers unless the cache holds `stored` of them (what the database holds;
   * numbers are only ever added, so the same count is the same numbers).
   */
  async sync(db: Kysely<any>, tenantId: string, stored?: number): Promise<void> {
    if (stored !== undefined && this.countOf(tenantId) === stored) return;
    const { rows } = await sql<{ name: string; code: number }>`SELECT name, code FROM log_attribute_codes
      WHERE tenant_id = ${tenantId}`.execute(db);
    const codes: TenantCodes = { members: new Map(), names: [] };
    for (const row of rows) add(codes, row.name, Number(row.code));
    this.#tenants.set(tenantId, codes);
  }

  /** After the batch that stored `rows` committed. */
  remember(tenantId: string, rows: readonly AttributeCodeRow[]): void {
    const codes = this.#tenants.get(tenantId);
    if (codes) for (const row of rows) add(codes, row.name, row.code);
  }

  /** The tenant's attribute names that have numbers (names stored as `~name` are not among them). */
  namesOf(tenantId: string): readonly string[] {
    return [...(this.#tenants.get(tenantId)?.members.keys() ?? [])];
  }

  /** The key a name is stored under: its number, else `~name` (also for names never stored: no row has that key). */
  keyOf(tenantId: string, name: string): string {
    const code = this.#tenants.get(tenantId)?.members.get(name);
    return code === undefined ? `~${name}` : code.slice(1, -2);
  }

  /**
   * The attributes as stored (JSON text), or undefined when a name has no number yet and the tenant
   * has numbers left: the writer numbers it first (numbered).
   */
  encode(tenantId: string, attributes: Record<string, AttributeValue>): string | undefined {
    const codes = this.#tenants.get(tenantId);
    return codes && encodeWith(codes, attributes);
  }

  /**
   * Numbers for the names of `attributes` that have none, as many as the tenant has left, and an
   * encoder that uses them: the writer's, under the write lock. Stored with the batch; the cache
   * learns them once it committed (remember).
   */
  numbered(
    tenantId: string,
    attributes: readonly Record<string, AttributeValue>[],
  ): { rows: AttributeCodeRow[]; encode: (attributes: Record<string, AttributeValue>) => string } {
    const committed = this.#tenants.get(tenantId);
    if (!committed) throw new Error(`attribute numbers of tenant ${tenantId} are not loaded`);
    // The committed numbers as they are unless a name needs one (most batches: no copy per batch).
    let codes = committed;
    const rows: AttributeCodeRow[] = [];
    for (const entry of attributes) {
      for (const name in entry) {
        if (codes.members.has(name) || codes.names.length >= MAX_ATTRIBUTE_CODES) continue;
        if (codes === committed) codes = { members: new Map(committed.members), names: [...committed.names] };
        rows.push({ name, code: codes.names.length });
        add(codes, name, codes.names.length);
      }
    }
    return { rows, encode: (entry) => encodeWith(codes, entry)! };
  }

  /**
   * Stored attributes (JSON text on SQLite, parsed jsonb on PostgreSQL) with their names; undefined
   * when a number is not in the cache (sync, then again).
   */
  decode(tenantId: string, json: string | Record<string, AttributeValue>): Record<string, AttributeValue> | undefined {
    const stored = typeof json === 'string' ? (JSON.parse(json) as Record<string, AttributeValue>) : json;
    const names = this.#tenants.get(tenantId)?.names;
    const attributes = dict<AttributeValue>();
    for (const key in stored) {
      const name = key.startsWith('~') ? key.slice(1) : names?.[Number.parseInt(key, 36)];
      if (name === undefined) return undefined;
      attributes[name] = stored[key]!;
    }
    return attributes;
  }

  /** Rows with their attributes' names: numbers given since the cache was loaded are loaded first (from `db`). */
  async entries(db: Kysely<any>, tenantId: string, rows: readonly EntryRow[]): Promise<StoredLogEntry[]> {
    const entries: StoredLogEntry[] = [];
    for (const row of rows) {
      let attributes = this.decode(tenantId, row.attributes);
      if (attributes === undefined) {
        await this.sync(db, tenantId);
        attributes = this.decode(tenantId, row.attributes);
        if (attributes === undefined) throw new Error(`an entry of tenant ${tenantId} has an attribute number that is not stored`);
      }
      entries.push(toStoredEntry({ ...row, attributes }));
    }
    return entries;
  }
}

function add(codes: TenantCodes, name: string, code: number): void {
  codes.members.set(name, `"${code.toString(36)}":`);
  codes.names[code] = name;
}

function encodeWith(codes: TenantCodes, attributes: Record<string, AttributeValue>): string | undefined {
  let json = '';
  for (const name in attributes) {
    let member = codes.members.get(name);
    if (member === undefined) {
      if (codes.names.length < MAX_ATTRIBUTE_CODES) return undefined;
      member = `${JSON.stringify(`~${name}`)}:`;
    }
    const value = attributes[name]!;
    json += (json === '' ? '{' : ',') + member + (typeof value === 'string' ? JSON.stringify(value) : String(value));
  }
  return json === '' ? '{}' : `${json}}`;
}

/** The numbers a batch gave, stored in its transaction (at most MAX_ATTRIBUTE_CODES rows: one statement on either dialect). */
export function storeAttributeCodes(db: Kysely<any>, tenantId: string, rows: readonly AttributeCodeRow[]) {
  return db.insertInto('log_attribute_codes').values(rows.map(({ name, code }) => ({ tenant_id: tenantId, name, code })));
}
