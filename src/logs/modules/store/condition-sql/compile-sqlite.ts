import { sql, type RawBuilder } from 'kysely';
import { isJsonScalarLiteral, type FieldRef } from '../../query/fields.js';
import { equalityFacets, type FacetLookup } from '../facets.js';
import { ENTRY_ID, type Condition, type TextExpr } from '../../query/condition.js';
import { fieldSql, rangeSql, type KeyOf, type MatchField } from './field-sql.js';
import type { FieldSql } from '../store-core.js';
import { patternProgram } from '../../query/patterns.js';
import { PATTERN_FUNCTION } from '../../query/pattern-match-source.js';

/**
 * Compiles a condition to a SQLite boolean expression over `log_entries AS l`. Whatever the tenant's
 * full-text index can answer (message words, and equalities on faceted fields: facets.ts) becomes one
 * lookup, `l.id IN (SELECT rowid FROM log_fts_<tenant>_<hour> WHERE ... MATCH ? AND rowid BETWEEN ? AND ?
 * UNION ALL ...)` over the hours of the read's ids (fts-hours.ts); the rest is checked on the rows.
 */
export interface SqliteQueryContext {
  /** `SELECT rowid …` of the entries an FTS5 query matches in the tenant's index, over the read's ids (fts-hours.ts). */
  matchingIds: (match: string) => RawBuilder<unknown>;
  /** The tenant's facets the query names (facets.ts). */
  facets: FacetLookup;
  /** The key an attribute name is stored under in the tenant's rows (attribute-codes.ts). */
  keyOf: KeyOf;
}

export function compileSqlite(condition: Condition, context: SqliteQueryContext): RawBuilder<unknown> {
  if (condition.kind !== 'all') {
    const match = ftsQuery(condition, context.facets);
    if (match !== null) return ftsLookup(match, context);
  }
  switch (condition.kind) {
    case 'all':
      return sql`1 = 1`;
    case 'and': {
      // The children the index answers become one lookup; the others are checked on the rows.
      const indexed = condition.children.filter((child) => ftsQuery(child, context.facets) !== null);
      const match = indexed.length > 1 ? ftsQuery({ kind: 'and', children: indexed }, context.facets) : null;
      const rest = match === null ? condition.children : condition.children.filter((child) => !indexed.includes(child));
      const parts = rest.map((child) => sql`(${compileSqlite(child, context)})`);
      if (match !== null) parts.unshift(ftsLookup(match, context));
      return sql.join(parts, sql` AND `);
    }
    case 'or': {
      const parts = condition.children.map((child) => sql`(${compileSqlite(child, context)})`);
      return sql.join(parts, sql` OR `);
    }
    case 'not':
      // A field the entry lacks makes its check NULL: the entry does not match it, so it matches its NOT.
      // A column's value (NOT level:info) is checked on the row: listing the index's entries with the
      // value (most of them, for a common one) cost 60 ms an hour at 10M events a day.
      if (condition.child.kind === 'equals' && condition.child.field.kind === 'column')
        return sql`(${equals(condition.child.field, condition.child.value, context.keyOf)}) IS NOT TRUE`;
      return sql`(${compileSqlite(condition.child, context)}) IS NOT TRUE`;
    case 'text':
      return compileText(condition.expr, context);
    case 'contains':
      return sql`instr(l.message, ${condition.value}) > 0`;
    case 'equals':
      return equals(condition.field, condition.value, context.keyOf);
    case 'prefix':
      return sql`substr(${valueOf(condition.field, context.keyOf)}, 1, ${[...condition.value].length}) = ${condition.value}`;
    case 'exists':
      return condition.field.kind === 'attribute'
        ? sql`(l.attributes ->> ${attributePath(context.keyOf(condition.field.name))}) IS NOT NULL`
        : sql`coalesce(${valueOf(condition.field, context.keyOf)}, '') <> ''`;
    case 'range':
      return range(condition, context.keyOf);
    case 'pattern':
      return patternCheck(condition, context.keyOf);
    case 'entryId':
      // Digits only (checked here again), written as they are: an id past 2^53 stays exact.
      return ENTRY_ID.test(condition.id) ? sql`l.id = ${sql.raw(condition.id)}` : sql`0 = 1`;
    case 'fields':
      throw new Error('unreachable: the store expands field patterns (expandFieldPatterns) before compiling');
  }
}

/** The pattern's program run by the connection's `gerbang_match` on the value (pattern-match-source.ts). */
function patternCheck({ field, pattern }: Extract<Condition, { kind: 'pattern' }>, keyOf: KeyOf): RawBuilder<unknown> {
  const program = patternProgram(pattern, field.kind === 'message');
  let value = valueOf(field, keyOf);
  if (field.kind === 'attribute') {
    const path = attributePath(keyOf(field.name));
    value = sql`(CASE WHEN json_type(l.attributes, ${path}) IN ('text', 'integer') THEN CAST(l.attributes ->> ${path} AS TEXT) END)`;
  }
  return sql`${sql.raw(PATTERN_FUNCTION)}(${program}, ${value}) = 1`;
}

function ftsLookup(match: string, context: SqliteQueryContext): RawBuilder<unknown> {
  return sql`l.id IN (${context.matchingIds(match)})`;
}

/**
 * The FTS5 query of a condition when the index answers it exactly, else null: words in the `body`
 * column, facets in the `facets` column; AND, OR, and NOT after something positive (FTS5's NOT is binary).
 */
export function ftsQuery(condition: Condition, facets: FacetLookup): string | null {
  switch (condition.kind) {
    case 'text': {
      const match = ftsMatchExpression(condition.expr);
      return match === null ? null : `body : (${match})`;
    }
    case 'equals': {
      const values = equalityFacets(condition.field, condition.value, facets.unfaceted);
      return values === null ? null : `(${values.map((value) => `facets : "${facets.tokenOf(value)}"`).join(' OR ')})`;
    }
    case 'or': {
      const parts = condition.children.map((child) => ftsQuery(child, facets));
      return parts.every((part) => part !== null) ? parts.map((part) => `(${part})`).join(' OR ') : null;
    }
    case 'and':
      return conjunction(condition.children, facets);
    default:
      return null;
  }
}

/**
 * The FTS5 query that finds exactly the entries matching a condition in a tenant's index, or null
 * when the index cannot answer it alone (or it is everything: no lookup needed).
 */
export function indexQuery(condition: Condition, facets: FacetLookup): string | null {
  if (condition.kind === 'all') return null;
  return conjunction(condition.kind === 'and' ? condition.children : [condition], facets);
}

function conjunction(children: readonly Condition[], facets: FacetLookup): string | null {
  const positive: string[] = [];
  const negative: string[] = [];
  for (const child of children) {
    const part = ftsQuery(child.kind === 'not' ? child.child : child, facets);
    if (part === null) return null;
    (child.kind === 'not' ? negative : positive).push(part);
  }
  if (positive.length === 0) return null;
  let result = positive.map((part) => `(${part})`).join(' AND ');
  for (const part of negative) result = `(${result}) NOT (${part})`;
  return result;
}

function range({ field, compare, lower, upper }: Extract<Condition, { kind: 'range' }>, keyOf: KeyOf): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return rangeSql(sql.ref('l.ts'), lower, upper, (bound) => sql`${bound}`);
  const fields = sqliteFields(keyOf);
  if (compare === 'text') return rangeSql(fields.value(field), lower, upper, (bound) => sql`${String(bound)}`);
  const number = fields.number(field);
  return rangeSql(number, lower, upper, (bound) => sql`${bound}`);
}

function compileText(expr: TextExpr, context: SqliteQueryContext): RawBuilder<unknown> {
  const match = ftsMatchExpression(expr);
  if (match !== null) return ftsLookup(`body : (${match})`, context);
  // Shapes FTS5 cannot say alone (a lone NOT, an OR over a NOT): combine index lookups in SQL.
  switch (expr.kind) {
    case 'not':
      return sql`NOT (${compileText(expr.child, context)})`;
    case 'and':
    case 'or': {
      const parts = expr.children.map((child) => sql`(${compileText(child, context)})`);
      return sql.join(parts, expr.kind === 'and' ? sql` AND ` : sql` OR `);
    }
    case 'phrase':
      throw new Error('unreachable: a phrase is always an FTS5 expression');
  }
}

/**
 * The FTS5 MATCH string of a text expression, or null when FTS5 cannot express it (FTS5's NOT is
 * binary: `a NOT b`). Tokens hold only letters and digits and are double-quoted, so no user input
 * can form an FTS5 operator (`NEAR(`, `*`, `^`, column filters).
 */
export function ftsMatchExpression(expr: TextExpr): string | null {
  switch (expr.kind) {
    case 'phrase':
      return `"${expr.tokens.join(' ')}"${expr.prefix ? ' *' : ''}`;
    case 'or': {
      const parts = expr.children.map(ftsMatchExpression);
      return parts.every((part) => part !== null) ? parts.map((part) => `(${part})`).join(' OR ') : null;
    }
    case 'and': {
      const positive = expr.children.filter((child) => child.kind !== 'not').map(ftsMatchExpression);
      const negative = expr.children.flatMap((child) => (child.kind === 'not' ? [ftsMatchExpression(child.child)] : []));
      if (positive.length === 0 || positive.some((part) => part === null) || negative.some((part) => part === null)) return null;
      let result = positive.map((part) => `(${part})`).join(' AND ');
      for (const part of negative) result = `(${result}) NOT (${part})`;
      return result;
    }
    case 'not':
      return null;
  }
}

/** The JSON path of a stored attribute key: `$."1a"`, `$."~k8s.pod.name"` (quotes and backslashes escaped). */
export function attributePath(key: string): string {
  return `$."${key.replace(/["\\]/g, (char) => `\\${char}`)}"`;
}

function valueOf(field: MatchField, keyOf: KeyOf): RawBuilder<unknown> {
  return fieldSql(field, (name) => sql`(l.attributes ->> ${attributePath(keyOf(name))})`);
}

function equals(field: MatchField, value: string, keyOf: KeyOf): RawBuilder<unknown> {
  if (field.kind !== 'attribute') return sql`${valueOf(field, keyOf)} = ${value}`;
  // `->` gives the JSON text of the value: '"500"' for a string, '500' for a number.
  const json = sql`(l.attributes -> ${attributePath(keyOf(field.name))})`;
  if (isJsonScalarLiteral(value)) return sql`${json} IN (json_quote(${value}), ${value})`;
  return sql`${json} = json_quote(${value})`;
}

/**
 * A field's expressions over the tenant's rows (store-core's FieldSql): its value as text (histogram
 * groupBy, distinct), as a number (a JSON number as it is, a numeric string (`"503"`) converted,
 * anything else NULL), and its ORDER BY expression.
 */
export function sqliteFields(keyOf: KeyOf): FieldSql {
  const value = (field: FieldRef): RawBuilder<unknown> => {
    if (field.kind === 'timestamp') return sql`CAST(l.ts AS TEXT)`;
    if (field.kind === 'attribute') return sql`CAST(l.attributes ->> ${attributePath(keyOf(field.name))} AS TEXT)`;
    return valueOf(field, keyOf);
  };
  const number = (field: FieldRef): RawBuilder<unknown> => {
    if (field.kind === 'timestamp') return sql.ref('l.ts');
    const text = valueOf(field, keyOf);
    return sql`(CASE WHEN typeof(${text}) IN ('integer', 'real') THEN ${text} WHEN typeof(${text}) = 'text' AND ${text} GLOB '*[0-9]*' AND ${text} NOT GLOB '*[^0-9.eE+-]*' THEN CAST(${text} AS REAL) END)`;
  };
  const sort = (field: FieldRef): RawBuilder<unknown> => (field.kind === 'timestamp' ? sql.ref('l.ts') : valueOf(field, keyOf));
  return { value, number, sort };
}
