import { sql, type RawBuilder } from 'kysely';
import { isJsonScalarLiteral, type FieldRef } from '../fields.js';
import { equalityFacets, postgresFacet, type FacetLookup } from '../facets.js';
import type { Condition, TextExpr } from './condition.js';
import { fieldSql, rangeSql, type MatchField } from './field-sql.js';

/**
 * Compiles a condition to a PostgreSQL boolean expression over `log_entries AS l`. Whatever the
 * tsvector answers (message words, and equalities on faceted fields: facets.ts) becomes one
 * `l.search @@ $n::tsquery`; the tsquery text is built here from our own tokens (letters and digits
 * only, quoted) and facets, never by PostgreSQL's parser, so it matches the tsvector built at ingest.
 * It is checked on the rows that postings find (postgres-postings.ts); there is no index on it.
 */
export function compilePostgres(condition: Condition, facets: FacetLookup): RawBuilder<unknown> {
  const query = condition.kind === 'all' ? null : tsquery(condition, facets);
  if (query !== null) return sql`l.search @@ ${query}::tsquery`;
  switch (condition.kind) {
    case 'all':
      return sql`TRUE`;
    case 'and': {
      // The children the tsvector answers become one lookup; the others are checked on the rows.
      const indexed = condition.children.filter((child) => tsquery(child, facets) !== null);
      const merged = indexed.length > 1 ? tsquery({ kind: 'and', children: indexed }, facets) : null;
      const rest = merged === null ? condition.children : condition.children.filter((child) => !indexed.includes(child));
      const parts = rest.map((child) => sql`(${compilePostgres(child, facets)})`);
      if (merged !== null) parts.unshift(sql`l.search @@ ${merged}::tsquery`);
      return sql.join(parts, sql` AND `);
    }
    case 'or': {
      const parts = condition.children.map((child) => sql`(${compilePostgres(child, facets)})`);
      return sql.join(parts, sql` OR `);
    }
    case 'not':
      return sql`NOT (${compilePostgres(condition.child, facets)})`;
    case 'text':
      return sql`l.search @@ ${tsqueryText(condition.expr)}::tsquery`;
    case 'contains':
      return sql`strpos(l.message, ${condition.value}::text) > 0`;
    case 'equals':
      return equals(condition.field, condition.value);
    case 'prefix':
      return sql`starts_with(${valueOf(condition.field)}, ${condition.value}::text)`;
    case 'exists':
      return sql`coalesce(${valueOf(condition.field)}, '') <> ''`;
    case 'range':
      return range(condition);
  }
}

/** The tsquery of a condition when the tsvector answers it exactly (words and facets), else null. */
function tsquery(condition: Condition, facets: FacetLookup): string | null {
  switch (condition.kind) {
    case 'text':
      return tsqueryText(condition.expr);
    case 'equals': {
      const values = equalityFacets(condition.field, condition.value, facets.unfaceted);
      return values === null ? null : values.map((value) => `'${postgresFacet(facets.tokenOf(value))}'`).join(' | ');
    }
    case 'and': {
      // A NOT only beside something positive: a tsquery of a NOT alone would scan the whole index.
      const positive = condition.children.filter((child) => child.kind !== 'not').map((child) => tsquery(child, facets));
      const negative = condition.children.flatMap((child) => (child.kind === 'not' ? [tsquery(child.child, facets)] : []));
      if (positive.length === 0 || [...positive, ...negative].some((part) => part === null)) return null;
      return [...positive.map((part) => `(${part})`), ...negative.map((part) => `!(${part})`)].join(' & ');
    }
    case 'or': {
      const parts = condition.children.map((child) => tsquery(child, facets));
      return parts.every((part) => part !== null) ? parts.map((part) => `(${part})`).join(' | ') : null;
    }
    default:
      return null;
  }
}

/** Text that PostgreSQL's numeric cast accepts. */
const NUMERIC_TEXT = String.raw`^\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$`;

function range({ field, compare, lower, upper }: Extract<Condition, { kind: 'range' }>): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return rangeSql(sql.ref('l.ts'), lower, upper, (bound) => sql`${bound}::bigint`);
  // COLLATE "C": bytewise, as SQLite compares, whatever the database's locale.
  if (compare === 'text') return rangeSql(sql`(${valueOf(field)} COLLATE "C")`, lower, upper, (bound) => sql`${String(bound)}::text`);
  const number = postgresNumberValue(field);
  return rangeSql(number, lower, upper, (bound) => sql`${bound}::numeric`);
}

export function tsqueryText(expr: TextExpr): string {
  switch (expr.kind) {
    case 'phrase':
      return expr.tokens.map((token, index) => `'${token}'${expr.prefix && index === expr.tokens.length - 1 ? ':*' : ''}`).join(' <-> ');
    case 'and':
    case 'or':
      return expr.children.map((child) => `(${tsqueryText(child)})`).join(expr.kind === 'and' ? ' & ' : ' | ');
    case 'not':
      return `!(${tsqueryText(expr.child)})`;
  }
}

function valueOf(field: MatchField): RawBuilder<unknown> {
  return fieldSql(field, (name) => sql`(l.attributes ->> ${name}::text)`);
}

function equals(field: MatchField, value: string): RawBuilder<unknown> {
  if (field.kind !== 'attribute') return sql`${valueOf(field)} = ${value}::text`;
  const json = sql`(l.attributes -> ${field.name}::text)`;
  if (isJsonScalarLiteral(value)) return sql`${json} IN (to_jsonb(${value}::text), ${value}::jsonb)`;
  return sql`${json} = to_jsonb(${value}::text)`;
}

/** A field's value as a number: a JSON number as it is, a numeric string (`"503"`) converted, anything else NULL. */
export function postgresNumberValue(field: FieldRef): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql.ref('l.ts');
  const text = valueOf(field);
  const json = field.kind === 'attribute' ? sql`jsonb_typeof(l.attributes -> ${field.name}::text) = 'number'` : sql`FALSE`;
  return sql`(CASE WHEN ${json} THEN ${text}::numeric WHEN ${text} ~ ${NUMERIC_TEXT} THEN ${text}::numeric END)`;
}

export function postgresSortExpression(field: FieldRef): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql.ref('l.ts');
  if (field.kind === 'attribute') return sql`(l.attributes -> ${field.name}::text)`;
  return valueOf(field);
}

export function postgresFieldValue(field: FieldRef): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql`l.ts::text`;
  return valueOf(field);
}
