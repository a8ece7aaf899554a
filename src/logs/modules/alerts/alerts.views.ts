import type { AlertRow, AlertRuleRow, HistoryEntry } from './alerts.repository.js';

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

/** 300000 -> "5m": the largest unit that divides the duration. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** The API form of a rule. The webhook secret is never returned, only whether there is one. */
export function ruleView(row: AlertRuleRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    name: row.name,
    query: row.query,
    filters: JSON.parse(row.filters) as { field: string; value: string }[],
    window: formatDuration(row.window_ms),
    window_ms: row.window_ms,
    condition: row.condition === 'absent' ? { type: row.condition } : { type: row.condition, threshold: row.threshold },
    interval: formatDuration(row.interval_ms),
    interval_ms: row.interval_ms,
    severity: row.severity,
    labels: JSON.parse(row.labels) as Record<string, string>,
    enabled: row.enabled === 1,
    webhook: row.webhook_url ? { url: row.webhook_url, has_secret: row.webhook_secret !== null } : null,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_evaluated_at: row.last_evaluated_at,
    next_evaluation_at: row.next_evaluation_at,
    last_count: row.last_count,
    last_error: row.last_error,
  };
}

export type RuleView = ReturnType<typeof ruleView>;

export function alertView(row: AlertRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    rule_id: row.rule_id,
    rule_name: row.rule_name,
    severity: row.severity,
    labels: JSON.parse(row.labels) as Record<string, string>,
    state: row.state,
    started_at: row.started_at,
    updated_at: row.updated_at,
    acknowledged_at: row.acknowledged_at,
    acknowledged_by: row.acknowledged_by,
    silenced_until: row.silenced_until,
    resolved_at: row.resolved_at,
    resolved_by: row.resolved_by,
    last_count: row.last_count,
    history: JSON.parse(row.history) as HistoryEntry[],
    webhook: row.webhook_status
      ? {
          event: row.webhook_event,
          status: row.webhook_status,
          attempts: row.webhook_attempts ?? 0,
          last_error: row.webhook_last_error,
          last_at: row.webhook_last_at,
        }
      : null,
  };
}

export type AlertView = ReturnType<typeof alertView>;

/** A sentence about the alert for chat or e-mail; no link, no query results (they may hold personal data). */
export function alertSummary(rule: AlertRuleRow, alert: AlertRow, event: 'firing' | 'resolved'): string {
  const window = formatDuration(rule.window_ms);
  const condition = rule.condition === 'absent' ? 'no matching logs' : `${rule.condition} threshold ${rule.threshold}`;
  const head = `[${alert.severity.toUpperCase()}] ${rule.name}`;
  return event === 'firing'
    ? `${head} is firing: ${alert.last_count} matching logs in the last ${window} (${condition}).`
    : `${head} is resolved: ${alert.last_count} matching logs in the last ${window} (condition: ${condition}); resolved by ${alert.resolved_by ?? 'system'}.`;
}

/** The JSON body POSTed to a rule's webhook (docs/alerts.md). */
export function webhookPayload(rule: AlertRuleRow, alert: AlertRow, event: 'firing' | 'resolved', nowMs: number) {
  const view = ruleView(rule);
  return {
    event: `alert.${event}`,
    state: alert.state,
    tenant: { id: alert.tenant_id },
    alert: {
      id: alert.id,
      state: alert.state,
      severity: alert.severity,
      labels: JSON.parse(alert.labels) as Record<string, string>,
      last_count: alert.last_count,
      started_at: alert.started_at,
      resolved_at: alert.resolved_at,
      resolved_by: alert.resolved_by,
    },
    rule: {
      id: view.id,
      name: view.name,
      query: view.query,
      filters: view.filters,
      window: view.window,
      condition: view.condition,
      severity: view.severity,
      labels: view.labels,
    },
    timestamps: { sent_at: new Date(nowMs).toISOString(), started_at: alert.started_at, resolved_at: alert.resolved_at },
    summary: alertSummary(rule, alert, event),
  };
}
