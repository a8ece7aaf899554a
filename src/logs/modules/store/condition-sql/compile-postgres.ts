import { sql, type RawBuilder } from 'kysely';
import { isJsonScalarLiteral, type FieldRef } from '../../query/fields.js';
import type { Condition, TextExpr } from '../../query/condition.js';
import type { FieldSql } from '../store-core.js';
import { fieldSql, rangeSql, type KeyOf, type MatchField } from './field-sql.js';
import { postgresFuzzy, postgresRegex } from '../../query/patterns.js';

/**
 * Compiles a condition to a PostgreSQL boolean expression over `log_entries AS l`. It is checked on
 * the rows that postings find (postgres-postings.ts), or on a range's rows where postings cannot
 * narrow them. Message words are checked on the message itself (textCheck); faceted equalities like
 * any other, on the row's value. Attributes are read under the tenant's keys (`keyOf`).
 */
export function compilePostgres(condition: Condition, keyOf: KeyOf): RawBuilder<unknown> {
  switch (condition.kind) {
    case 'all':
      return sql`TRUE`;
    case 'and':
    case 'or': {
      const parts = condition.children.map((child) => sql`(${compilePostgres(child, keyOf)})`);
      return sql.join(parts, condition.kind === 'and' ? sql` AND ` : sql` OR `);
    }
    case 'not':
      // A field the entry lacks makes its check NULL: the entry does not match it, so it matches its NOT.
      return sql`(${compilePostgres(condition.child, keyOf)}) IS NOT TRUE`;
    case 'text':
      return textCheck(condition.expr);
    case 'contains':
      return sql`strpos(l.message, ${condition.value}::text) > 0`;
    case 'equals':
      return equals(condition.field, condition.value, keyOf);
    case 'prefix':
      return sql`starts_with(${valueOf(condition.field, keyOf)}, ${condition.value}::text)`;
    case 'exists':
      return sql`coalesce(${valueOf(condition.field, keyOf)}, '') <> ''`;
    case 'range':
      return range(condition, keyOf);
    case 'pattern':
      return patternCheck(condition, keyOf);
    case 'entryId':
      return sql`l.id = ${condition.id}::int8`;
    case 'fields':
      throw new Error('unreachable: the store expands field patterns (expandFieldPatterns) before compiling');
  }
}

/**
 * A pattern as a PostgreSQL regular expression (patterns.ts writes it; every character the client
 * sent is escaped). On the message, a word matches it, as textCheck finds words: runs of [a-z0-9]
 * of the lower-cased text of a plain message, else the space-joined tokens of `words`.
 */
function patternCheck({ field, pattern }: Extract<Condition, { kind: 'pattern' }>, keyOf: KeyOf): RawBuilder<unknown> {
  const expression = (any: string) =>
    pattern.kind === 'regex' ? postgresRegex(pattern.regex, any) : postgresFuzzy(pattern.term, pattern.edits, any);
  if (field.kind === 'message') {
    // Non-capturing groups only: captures make PostgreSQL's engine take its slower path.
    const plain = `(?:^|[^a-z0-9])(?:${expression('[a-z0-9]')})(?:[^a-z0-9]|$)`;
    const spaced = `(?:^| )(?:${expression('[^ ]')})(?: |$)`;
    return sql`(CASE WHEN l.words IS NULL THEN lower(l.message COLLATE "C") ~ ${plain}::text
      ELSE l.words ~ ${spaced}::text END)`;
  }
  let value = valueOf(field, keyOf);
  if (field.kind === 'attribute') {
    const key = keyOf(field.name);
    const text = sql`(l.attributes ->> ${key}::text)`;
    value = sql`(CASE jsonb_typeof(l.attributes -> ${key}::text) WHEN 'string' THEN ${text}
      WHEN 'number' THEN (CASE WHEN ${text} ~ '^-?[0-9]+$' THEN ${text} END) END)`;
  }
  // COLLATE "C": ranges of a class by code point, whatever the database's locale.
  return sql`(${value} COLLATE "C") ~ ${`^(?:${expression('.')})$`}::text`;
}

/**
 * Words, phrases and prefixes checked on the message, as tokenize.ts finds them. A plain message
 * (ASCII, no over-long run: `words` is null, as ftsBody decides) has for words the runs of `[a-z0-9]`
 * of its lower-cased text, which a regular expression finds exactly; any other message has its tokens
 * in `words`, space-joined. Tokens are letters and digits only: nothing in them needs escaping.
 */
function textCheck(expr: TextExpr): RawBuilder<unknown> {
  switch (expr.kind) {
    case 'phrase': {
      if (expr.tokens.length === 0) return sql`FALSE`;
      const plain = `(^|[^a-z0-9])${expr.tokens.join('[^a-z0-9]+')}${expr.prefix ? '' : '([^a-z0-9]|$)'}`;
      const spaced = `(^| )${expr.tokens.join(' ')}${expr.prefix ? '' : '( |$)'}`;
      // COLLATE "C": lower() then changes A–Z only, whatever the database's locale (as toLowerCase does for ASCII).
      return sql`(CASE WHEN l.words IS NULL THEN lower(l.message COLLATE "C") ~ ${plain}::text
        ELSE l.words ~ ${spaced}::text END)`;
    }
    case 'and':
    case 'or':
      return sql.join(
        expr.children.map((child) => sql`(${textCheck(child)})`),
        expr.kind === 'and' ? sql` AND ` : sql` OR `,
      );
    case 'not':
      return sql`NOT (${textCheck(expr.child)})`;
  }
}

/** Text that PostgreSQL's numeric cast accepts. */
const NUMERIC_TEXT = String.raw`^\s*[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$`;

function range({ field, compare, lower, upper }: Extract<Condition, { kind: 'range' }>, keyOf: KeyOf): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return rangeSql(sql.ref('l.ts'), lower, upper, (bound) => sql`${bound}::bigint`);
  // COLLATE "C": bytewise, as SQLite compares, whatever the database's locale.
  if (compare === 'text')
    return rangeSql(sql`(${valueOf(field, keyOf)} COLLATE "C")`, lower, upper, (bound) => sql`${String(bound)}::text`);
  return rangeSql(numberValue(field, keyOf), lower, upper, (bound) => sql`${bound}::numeric`);
}

function valueOf(field: MatchField, keyOf: KeyOf): RawBuilder<unknown> {
  return fieldSql(field, (name) => sql`(l.attributes ->> ${keyOf(name)}::text)`);
}

function equals(field: MatchField, value: string, keyOf: KeyOf): RawBuilder<unknown> {
  if (field.kind !== 'attribute') return sql`${valueOf(field, keyOf)} = ${value}::text`;
  const json = sql`(l.attributes -> ${keyOf(field.name)}::text)`;
  if (isJsonScalarLiteral(value)) return sql`${json} IN (to_jsonb(${value}::text), ${value}::jsonb)`;
  return sql`${json} = to_jsonb(${value}::text)`;
}

/** A field's value as a number: a JSON number as it is, a numeric string (`"503"`) converted, anything else NULL. */
function numberValue(field: FieldRef, keyOf: KeyOf): RawBuilder<unknown> {
  if (field.kind === 'timestamp') return sql.ref('l.ts');
  const text = valueOf(field, keyOf);
  const json = field.kind === 'attribute' ? sql`jsonb_typeof(l.attributes -> ${keyOf(field.name)}::text) = 'number'` : sql`FALSE`;
  return sql`(CASE WHEN ${json} THEN ${text}::numeric WHEN ${text} ~ ${NUMERIC_TEXT} THEN ${text}::numeric END)`;
}

/** Fields of a tenant's rows: attributes under their keys (`keyOf`), in jsonb. */
export function postgresFields(keyOf: KeyOf): FieldSql {
  return {
    value: (field) => (field.kind === 'timestamp' ? sql`l.ts::text` : valueOf(field, keyOf)),
    sort: (field) => {
      if (field.kind === 'timestamp') return sql.ref('l.ts');
      if (field.kind === 'attribute') return sql`(l.attributes -> ${keyOf(field.name)}::text)`;
      return valueOf(field, keyOf);
    },
    number: (field) => numberValue(field, keyOf),
  };
}
