import { sql, type RawBuilder } from 'kysely';
import { isJsonScalarLiteral, type FieldRef } from '../fields.js';
import type { Condition, TextExpr } from './condition.js';
import { fieldSql, rangeSql, type MatchField } from './field-sql.js';

/**
 * Compiles a condition to a SQLite boolean expression over `log_entries AS l`. Text expressions
 * become `l.id IN (SELECT rowid FROM log_entries_fts WHERE ... MATCH ? AND rowid BETWEEN ? AND ?)`:
 * the rowid window is the id range of the tenant's rows in the time range, so FTS5 only walks the
 * part of its doclists that can matter (DESIGN.md 6: restrict to the time range first).
 */
export interface SqliteQueryContext {
  /** Smallest and largest log id within the tenant's time range. */
  idWindow: { min: number; max: number };
}

export function compileSqlite(condition: Condition, context: SqliteQueryContext): RawBuilder<unknown> {
  switch (condition.kind) {
    case 'all':
      return sql`1 = 1`;
    case 'and':
    case 'or': {
      const parts = condition.children.map((child) => sql`(${compileSqlite(child, context)})`);
      return sql.join(parts, condition.kind === 'and' ? sql` AND ` : sql` OR `);
    }
    case 'not':
      return sql`NOT (${compileSqlite(condition.child, context)})`;
    case 'text':
      return compileText(condition.expr, context);
    case 'contains':
      return sql`instr(l.message, ${condition.value}) > 0`;
    case 'equals':
      return equals(condition.field, condition.value);
    case 'prefix':
      return sql`substr(${valueOf(condition.field)}, 1, ${[...condition.value].length}) = ${condition.value}`;
    case 'exists':
      return condition.field.kind === 'attribute'
        ? sql`(l.attributes ->> ${attributePath(condition.field.name)}) IS NOT NULL`
        : sql`coalesce(${valueOf(condition.field)}, '') <> ''`;
    case 'range':
      return range(condition);
  }
}

function range({ field, compare, lower, upper }: Extract<Condition, { kind: 'range' }>): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return rangeSql(sql.ref('l.ts'), lower, upper, (bound) => sql`${bound}`);
  if (compare === 'text') return rangeSql(sqliteFieldValue(field), lower, upper, (bound) => sql`${String(bound)}`);
  const number = sqliteNumberValue(field);
  return rangeSql(number, lower, upper, (bound) => sql`${bound}`);
}

function compileText(expr: TextExpr, context: SqliteQueryContext): RawBuilder<unknown> {
  const match = ftsMatchExpression(expr);
  if (match !== null) {
    const { min, max } = context.idWindow;
    return sql`l.id IN (SELECT rowid FROM log_entries_fts WHERE log_entries_fts MATCH ${match} AND rowid BETWEEN ${min} AND ${max})`;
  }
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

/** The JSON path of an attribute: `$."k8s.pod.name"` (quotes and backslashes escaped). */
export function attributePath(name: string): string {
  return `$."${name.replace(/["\\]/g, (char) => `\\${char}`)}"`;
}

function valueOf(field: MatchField): RawBuilder<unknown> {
  return fieldSql(field, (name) => sql`(l.attributes ->> ${attributePath(name)})`);
}

function equals(field: MatchField, value: string): RawBuilder<unknown> {
  if (field.kind !== 'attribute') return sql`${valueOf(field)} = ${value}`;
  // `->` gives the JSON text of the value: '"500"' for a string, '500' for a number.
  const json = sql`(l.attributes -> ${attributePath(field.name)})`;
  if (isJsonScalarLiteral(value)) return sql`${json} IN (json_quote(${value}), ${value})`;
  return sql`${json} = json_quote(${value})`;
}

/** A field's value as a number: a JSON number as it is, a numeric string (`"503"`) converted, anything else NULL. */
export function sqliteNumberValue(field: FieldRef): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql.ref('l.ts');
  const value = valueOf(field);
  return sql`(CASE WHEN typeof(${value}) IN ('integer', 'real') THEN ${value} WHEN typeof(${value}) = 'text' AND ${value} GLOB '*[0-9]*' AND ${value} NOT GLOB '*[^0-9.eE+-]*' THEN CAST(${value} AS REAL) END)`;
}

/** ORDER BY expression of a sort field (timestamp handled by the caller). */
export function sqliteSortExpression(field: FieldRef): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql.ref('l.ts');
  return valueOf(field);
}

/** The value of a field as text (histogram groupBy, distinct). */
export function sqliteFieldValue(field: FieldRef): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql`CAST(l.ts AS TEXT)`;
  if (field.kind === 'attribute') return sql`CAST(l.attributes ->> ${attributePath(field.name)} AS TEXT)`;
  return valueOf(field);
}
