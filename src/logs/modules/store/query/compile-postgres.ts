import { sql, type RawBuilder } from 'kysely';
import { isJsonScalarLiteral, type FieldRef } from '../fields.js';
import type { Condition, TextExpr } from './condition.js';
import { fieldSql, rangeSql, type MatchField } from './field-sql.js';

/**
 * Compiles a condition to a PostgreSQL boolean expression over `log_entries AS l`. Text expressions
 * become one `l.search @@ $n::tsquery`; the tsquery text is built here from our own tokens (letters and
 * digits only, quoted), never by PostgreSQL's parser, so it matches the tsvector built at ingest.
 */
export function compilePostgres(condition: Condition): RawBuilder<unknown> {
  switch (condition.kind) {
    case 'all':
      return sql`TRUE`;
    case 'and':
    case 'or': {
      const parts = condition.children.map((child) => sql`(${compilePostgres(child)})`);
      return sql.join(parts, condition.kind === 'and' ? sql` AND ` : sql` OR `);
    }
    case 'not':
      return sql`NOT (${compilePostgres(condition.child)})`;
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
