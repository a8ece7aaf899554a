import type { Kysely } from 'kysely';

// Alert rules and alerts (docs/alerts.md). Kysely<any>, free of app imports, one schema for both
// dialects. Times are ISO 8601 UTC text like the other logs tables; durations are milliseconds
// (bounded well below 2^31 by validation, so `integer` fits on PostgreSQL too).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('logs_alert_rules')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.notNull().references('logs_tenants.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('query', 'text', (col) => col.notNull())
    /** JSON array of {field, value}. */
    .addColumn('filters', 'text', (col) => col.notNull())
    .addColumn('window_ms', 'integer', (col) => col.notNull())
    /** above | below | absent */
    .addColumn('condition', 'text', (col) => col.notNull())
    .addColumn('threshold', 'integer', (col) => col.notNull())
    .addColumn('interval_ms', 'integer', (col) => col.notNull())
    .addColumn('severity', 'text', (col) => col.notNull())
    /** JSON object of string labels. */
    .addColumn('labels', 'text', (col) => col.notNull())
    .addColumn('enabled', 'integer', (col) => col.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    // Evaluator state: survives restarts.
    .addColumn('next_evaluation_at', 'text')
    .addColumn('last_evaluated_at', 'text')
    .addColumn('last_count', 'integer')
    .addColumn('last_error', 'text')
    /** While an evaluation runs: until when it holds the rule (one evaluation at a time, across processes). */
    .addColumn('lease_until', 'text')
    .execute();
  await db.schema.createIndex('logs_alert_rules_tenant_name_idx').on('logs_alert_rules').columns(['tenant_id', 'name']).unique().execute();
  await db.schema.createIndex('logs_alert_rules_due_idx').on('logs_alert_rules').columns(['enabled', 'next_evaluation_at']).execute();

  // No foreign key to the rule: an alert's history outlives a deleted rule (it keeps the rule's name).
  await db.schema
    .createTable('logs_alerts')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('tenant_id', 'text', (col) => col.notNull().references('logs_tenants.id').onDelete('cascade'))
    .addColumn('rule_id', 'text', (col) => col.notNull())
    /** The rule id while the alert is open (not resolved), null after: the unique index allows one open alert per rule. */
    .addColumn('open_rule_id', 'text')
    .addColumn('rule_name', 'text', (col) => col.notNull())
    .addColumn('severity', 'text', (col) => col.notNull())
    .addColumn('labels', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('started_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .addColumn('acknowledged_at', 'text')
    .addColumn('acknowledged_by', 'text')
    .addColumn('silenced_until', 'text')
    .addColumn('resolved_at', 'text')
    .addColumn('resolved_by', 'text')
    .addColumn('last_count', 'integer', (col) => col.notNull())
    /** JSON array of {at, actor, from, to, comment, until}. */
    .addColumn('history', 'text', (col) => col.notNull())
    .addColumn('webhook_event', 'text')
    .addColumn('webhook_status', 'text')
    .addColumn('webhook_attempts', 'integer')
    .addColumn('webhook_last_error', 'text')
    .addColumn('webhook_last_at', 'text')
    .execute();
  await db.schema.createIndex('logs_alerts_open_rule_idx').on('logs_alerts').column('open_rule_id').unique().execute();
  await db.schema.createIndex('logs_alerts_tenant_started_idx').on('logs_alerts').columns(['tenant_id', 'started_at']).execute();
  await db.schema.createIndex('logs_alerts_tenant_state_idx').on('logs_alerts').columns(['tenant_id', 'state']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('logs_alerts').execute();
  await db.schema.dropTable('logs_alert_rules').execute();
}
