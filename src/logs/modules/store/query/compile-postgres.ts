import { sql, type RawBuilder } from 'kysely';
import { isJsonScalarLiteral, type FieldRef } from '../fields.js';
import type { Condition, TextExpr } from './condition.js';

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
  }
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

type MatchField = Exclude<FieldRef, { kind: 'timestamp' }>;

function valueOf(field: MatchField): RawBuilder<unknown> {
  switch (field.kind) {
    case 'message':
      return sql.ref('l.message');
    case 'column':
      return sql.ref(`l.${field.column}`);
    case 'attribute':
      return sql`(l.attributes ->> ${field.name}::text)`;
  }
}

function equals(field: MatchField, value: string): RawBuilder<unknown> {
  if (field.kind !== 'attribute') return sql`${valueOf(field)} = ${value}::text`;
  const json = sql`(l.attributes -> ${field.name}::text)`;
  if (isJsonScalarLiteral(value)) return sql`${json} IN (to_jsonb(${value}::text), ${value}::jsonb)`;
  return sql`${json} = to_jsonb(${value}::text)`;
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
