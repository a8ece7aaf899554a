import { sql, type RawBuilder } from 'kysely';
import type { FieldRef } from '../../query/fields.js';
import type { ConditionBound } from '../../query/condition.js';

export type MatchField = Exclude<FieldRef, { kind: 'timestamp' }>;

/** The key an attribute is stored under in a tenant's rows: its number (attribute-codes.ts). */
export type KeyOf = (name: string) => string;

/** A field of `log_entries AS l`; `attribute` gives the dialect's text value of an attribute. */
export function fieldSql(field: MatchField, attribute: (name: string) => RawBuilder<unknown>): RawBuilder<unknown> {
  switch (field.kind) {
    case 'message':
      return sql.ref('l.message');
    case 'column':
      return sql.ref(`l.${field.column}`);
    case 'attribute':
      return attribute(field.name);
  }
}

/** `value >= lower AND value < upper` (either bound may be open); `literal` types a bound for the dialect. */
export function rangeSql(
  value: RawBuilder<unknown>,
  lower: ConditionBound | null,
  upper: ConditionBound | null,
  literal: (bound: number | string) => RawBuilder<unknown>,
): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  if (lower) parts.push(sql`${value} ${sql.raw(lower.inclusive ? '>=' : '>')} ${literal(lower.value)}`);
  if (upper) parts.push(sql`${value} ${sql.raw(upper.inclusive ? '<=' : '<')} ${literal(upper.value)}`);
  // Both bounds open (`[* TO *]` on a time): every row in the time range.
  if (parts.length === 0) return sql`${value} IS NOT NULL`;
  return sql.join(parts, sql` AND `);
}
