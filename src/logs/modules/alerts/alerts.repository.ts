import { sql, type Kysely } from 'kysely';
import type { LogsSchema } from '../../db/schema.js';
import { newestFirstPage } from '../../../shared/db/newest-first-page.js';
import type { AlertState, ConditionType, Severity } from './alerts.states.js';

export interface AlertRuleRow {
  id: string;
  tenant_id: string;
  name: string;
  query: string;
  filters: string;
  window_ms: number;
  condition: ConditionType;
  threshold: number;
  interval_ms: number;
  severity: Severity;
  labels: string;
  enabled: number;
  webhook_url: string | null;
  webhook_secret: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  next_evaluation_at: string | null;
  last_evaluated_at: string | null;
  last_count: number | null;
  last_error: string | null;
  lease_until: string | null;
}

export interface HistoryEntry {
  at: string;
  actor: string;
  actor_id: string | null;
  from: AlertState | null;
  to: AlertState;
  comment?: string | undefined;
  until?: string | undefined;
}

export interface AlertRow {
  id: string;
  tenant_id: string;
  rule_id: string;
  open_rule_id: string | null;
  rule_name: string;
  severity: Severity;
  labels: string;
  state: AlertState;
  started_at: string;
  updated_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  silenced_until: string | null;
  resolved_at: string | null;
  resolved_by: string | null;
  last_count: number;
  history: string;
  webhook_event: string | null;
  webhook_status: string | null;
  webhook_attempts: number | null;
  webhook_last_error: string | null;
  webhook_last_at: string | null;
}

/** The alert tables, typed here so the module stays self-contained (db.withTables). */
type AlertTables = {
  logs_alert_rules: AlertRuleRow;
  logs_alerts: AlertRow;
};

export interface AlertFilter {
  tenantId: string;
  states?: readonly AlertState[] | undefined;
  severity?: Severity | undefined;
  ruleId?: string | undefined;
  /** ISO, inclusive, on started_at. */
  from?: string | undefined;
  /** ISO, exclusive, on started_at. */
  to?: string | undefined;
}

/** Unique-index violation on either engine (an open alert for the rule already exists). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    (typeof e?.message === 'string' && e.message.includes('UNIQUE constraint failed'))
  );
}

/** Alert rules and alerts; every read and write is tenant-scoped except the evaluator's. */
export class AlertsRepository {
  private readonly db: Kysely<AlertTables>;

  constructor(db: Kysely<LogsSchema>) {
    this.db = db.withTables<AlertTables>() as unknown as Kysely<AlertTables>;
  }

  // Rules

  async insertRule(row: AlertRuleRow): Promise<void> {
    await this.db.insertInto('logs_alert_rules').values(row).execute();
  }

  async listRules(tenantId: string): Promise<AlertRuleRow[]> {
    return this.db.selectFrom('logs_alert_rules').selectAll().where('tenant_id', '=', tenantId).orderBy('name').orderBy('id').execute();
  }

  async findRule(tenantId: string, id: string): Promise<AlertRuleRow | undefined> {
    return this.db.selectFrom('logs_alert_rules').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  }

  async findRuleById(id: string): Promise<AlertRuleRow | undefined> {
    return this.db.selectFrom('logs_alert_rules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findRuleByName(tenantId: string, name: string): Promise<AlertRuleRow | undefined> {
    return this.db.selectFrom('logs_alert_rules').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
  }

  async updateRule(id: string, changes: Partial<AlertRuleRow>): Promise<void> {
    await this.db.updateTable('logs_alert_rules').set(changes).where('id', '=', id).execute();
  }

  async deleteRule(id: string): Promise<void> {
    await this.db.deleteFrom('logs_alert_rules').where('id', '=', id).execute();
  }

  /** Enabled rules whose next evaluation is due, oldest due first. */
  async dueRules(nowIso: string, limit: number): Promise<AlertRuleRow[]> {
    return (
      this.db
        .selectFrom('logs_alert_rules')
        .selectAll()
        .where('enabled', '=', 1)
        .where((eb) => eb.or([eb('next_evaluation_at', 'is', null), eb('next_evaluation_at', '<=', nowIso)]))
        // New and re-enabled rules (null) first on both engines (PostgreSQL sorts nulls last), then the longest overdue.
        .orderBy(sql`next_evaluation_at is null`, 'desc')
        .orderBy('next_evaluation_at')
        .limit(limit)
        .execute()
    );
  }

  /**
   * Takes the rule for one evaluation: a conditional update, so two evaluators (two timers, two
   * processes on one database) never evaluate the same rule at once. False when another holds it.
   */
  async lease(id: string, nowIso: string, untilIso: string): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_alert_rules')
      .set({ lease_until: untilIso })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', nowIso)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  // Alerts

  async insertAlert(row: AlertRow): Promise<void> {
    await this.db.insertInto('logs_alerts').values(row).execute();
  }

  async findAlert(tenantId: string, id: string): Promise<AlertRow | undefined> {
    return this.db.selectFrom('logs_alerts').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  }

  async findAlertById(id: string): Promise<AlertRow | undefined> {
    return this.db.selectFrom('logs_alerts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async openAlertOf(ruleId: string): Promise<AlertRow | undefined> {
    return this.db.selectFrom('logs_alerts').selectAll().where('open_rule_id', '=', ruleId).executeTakeFirst();
  }

  /** Changes an alert only if it is still in `expected` state (optimistic: a concurrent change wins, this one reports false). */
  async transition(id: string, expected: AlertState, changes: Partial<AlertRow>): Promise<boolean> {
    const result = await this.db
      .updateTable('logs_alerts')
      .set(changes)
      .where('id', '=', id)
      .where('state', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async updateAlert(id: string, changes: Partial<AlertRow>): Promise<void> {
    await this.db.updateTable('logs_alerts').set(changes).where('id', '=', id).execute();
  }

  /** Alerts whose last webhook notification was queued or retrying but not finished (a restart forgot it). */
  async unfinishedWebhooks(limit: number): Promise<AlertRow[]> {
    return this.db.selectFrom('logs_alerts').selectAll().where('webhook_status', 'in', ['pending', 'retrying']).limit(limit).execute();
  }

  /** Silenced alerts whose silence has ended. */
  async expiredSilences(nowIso: string, limit: number): Promise<AlertRow[]> {
    return this.db
      .selectFrom('logs_alerts')
      .selectAll()
      .where('state', '=', 'silenced')
      .where('silenced_until', '<=', nowIso)
      .limit(limit)
      .execute();
  }

  private filtered(filter: AlertFilter) {
    let query = this.db.selectFrom('logs_alerts').where('tenant_id', '=', filter.tenantId);
    if (filter.states && filter.states.length > 0) query = query.where('state', 'in', [...filter.states]);
    if (filter.severity) query = query.where('severity', '=', filter.severity);
    if (filter.ruleId) query = query.where('rule_id', '=', filter.ruleId);
    if (filter.from) query = query.where('started_at', '>=', filter.from);
    if (filter.to) query = query.where('started_at', '<', filter.to);
    return query;
  }

  /** Newest first. */
  listAlerts(filter: AlertFilter, page: number, limit: number): Promise<{ rows: AlertRow[]; total: number }> {
    return newestFirstPage(this.filtered(filter), 'started_at', page, limit);
  }

  /** Alerts in `states` by severity, of one tenant or (undefined) of all. */
  async countBySeverity(tenantId: string | undefined, states: readonly AlertState[]): Promise<{ severity: Severity; count: number }[]> {
    let query = this.db
      .selectFrom('logs_alerts')
      .select(['severity', (eb) => eb.fn.countAll<number>().as('count')])
      .where('state', 'in', [...states]);
    if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
    const rows = await query.groupBy('severity').execute();
    return rows.map((row) => ({ severity: row.severity, count: Number(row.count) }));
  }
}
