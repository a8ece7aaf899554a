import { randomUUID } from 'node:crypto';
import { parseDuration } from '../../../shared/config/duration.js';
import { AppError } from '../../../shared/errors/app-error.js';
import { invalidBody } from '../../http/errors.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client, LogsAuthContext } from '../auth/authenticate.js';
import { parseQuery } from '../query/parser.js';
import { appendHistory, type AlertEvaluator, type EvaluationResult } from './alerts.evaluator.js';
import { webhookUrlProblem } from './alerts.notifier.js';
import { isUniqueViolation, type AlertRow, type AlertRuleRow, type AlertsRepository, type HistoryEntry } from './alerts.repository.js';
import { ACTIVE_STATES, OPEN_STATES, userMayChange, type AlertState, type ConditionType, type Severity } from './alerts.states.js';
import { alertView, formatDuration, ruleView, type AlertView, type RuleView } from './alerts.views.js';
import { dict } from '../../../shared/dict.js';

const SECOND = 1000;
const DAY = 86_400_000;
const WINDOW_RANGE = { min: 10 * SECOND, max: 7 * DAY };
const INTERVAL_RANGE = { min: 5 * SECOND, max: DAY };
const DEFAULT_INTERVAL = '1m';
const MAX_SILENCE_MS = 30 * DAY;
const MAX_LABELS = 32;
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const MIN_SECRET_LENGTH = 16;

export interface RuleInput {
  name?: string | undefined;
  query?: string | undefined;
  filters?: { field: string; value: string }[] | undefined;
  window?: string | undefined;
  condition?: { type: ConditionType; threshold?: number | undefined } | undefined;
  interval?: string | undefined;
  severity?: Severity | undefined;
  labels?: Record<string, string> | undefined;
  enabled?: boolean | undefined;
  webhook?: { url: string; secret?: string | undefined } | null | undefined;
}

export interface StatusInput {
  status: AlertState;
  comment?: string | undefined;
  until?: string | undefined;
}

export interface AlertListFilter {
  state?: AlertState | undefined;
  severity?: Severity | undefined;
  rule_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

function durationOf(field: string, text: string, range: { min: number; max: number }): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms < range.min || ms > range.max) {
    throw invalidBody(`${field} must be a duration from ${formatDuration(range.min)} to ${formatDuration(range.max)}, got "${text}"`);
  }
  return ms;
}

export interface AlertsServiceDeps {
  repository: AlertsRepository;
  evaluator: AlertEvaluator;
  audit: LogsAuditRepository;
  /** LOGS_WEBHOOK_ALLOWED_HOSTS. */
  allowedWebhookHosts: readonly string[];
  now: () => number;
}

/**
 * Alert rules and alerts of a tenant (alerts:read, alerts:write). Rule validation and the user
 * side of the state machine live here; the evaluator opens and resolves alerts by itself.
 */
export class AlertsService {
  constructor(private readonly deps: AlertsServiceDeps) {}

  private nowIso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  /** Checks a complete rule; 400 `invalid json body` with the reason. Returns the stored form of its fields. */
  private validated(input: Required<Pick<RuleInput, 'name' | 'window' | 'condition' | 'severity'>> & RuleInput, current?: AlertRuleRow) {
    const name = input.name.trim();
    if (name === '') throw invalidBody('name must not be blank');
    const query = (input.query ?? '').trim();
    parseQuery(query); // a QuerySyntaxError is a 400 with its position (http/errors.ts)
    const windowMs = durationOf('window', input.window, WINDOW_RANGE);
    const intervalMs = durationOf('interval', input.interval ?? DEFAULT_INTERVAL, INTERVAL_RANGE);
    const { type, threshold } = input.condition;
    if (type === 'absent' && threshold !== undefined)
      throw invalidBody('condition.threshold is not used with absent (it means no matching log at all)');
    if (type !== 'absent' && threshold === undefined) throw invalidBody(`condition.threshold is required with ${type}`);
    if (type === 'below' && threshold === 0)
      throw invalidBody('condition.threshold must be at least 1 with below (a count is never below 0)');
    const labels = dict(input.labels ?? []);
    const names = Object.keys(labels);
    if (names.length > MAX_LABELS) throw invalidBody(`labels: at most ${MAX_LABELS}`);
    const badLabel = names.find((label) => !LABEL_NAME.test(label));
    if (badLabel !== undefined) throw invalidBody(`labels: "${badLabel.slice(0, 64)}" is not a valid label name (letters, digits, _ . -)`);
    let webhookUrl: string | null = null;
    let webhookSecret: string | null = null;
    if (input.webhook) {
      const problem = webhookUrlProblem(input.webhook.url, this.deps.allowedWebhookHosts);
      if (problem) throw invalidBody(problem);
      webhookUrl = input.webhook.url;
      // On update an omitted secret keeps the current one; "" removes it.
      const secret =
        input.webhook.secret === undefined ? (current?.webhook_secret ?? null) : input.webhook.secret === '' ? null : input.webhook.secret;
      if (secret !== null && secret.length < MIN_SECRET_LENGTH)
        throw invalidBody(`webhook.secret must be at least ${MIN_SECRET_LENGTH} characters`);
      webhookSecret = secret;
    }
    return {
      name,
      query,
      filters: JSON.stringify(input.filters ?? []),
      window_ms: windowMs,
      condition: type,
      threshold: threshold ?? 0,
      interval_ms: intervalMs,
      severity: input.severity,
      labels: JSON.stringify(labels),
      webhook_url: webhookUrl,
      webhook_secret: webhookSecret,
    };
  }

  private async ruleOf(tenantId: string, id: string): Promise<AlertRuleRow> {
    const rule = await this.deps.repository.findRule(tenantId, id);
    if (!rule) throw new AppError('LOGS_NOT_FOUND');
    return rule;
  }

  private async record(
    tenantId: string,
    actor: LogsAuthContext,
    client: Client,
    action: string,
    targetType: string,
    targetId: string,
    details: Record<string, unknown>,
  ) {
    await this.deps.audit.record({
      tenantId,
      action,
      outcome: 'success',
      ...auditActor(actor),
      targetType,
      targetId,
      ...client,
      details,
    });
  }

  private async ensureUniqueName(tenantId: string, name: string, except?: string): Promise<void> {
    const existing = await this.deps.repository.findRuleByName(tenantId, name);
    if (existing && existing.id !== except) throw invalidBody(`rule "${name}" already exists`);
  }

  // Rules

  async listRules(tenantId: string): Promise<RuleView[]> {
    return (await this.deps.repository.listRules(tenantId)).map(ruleView);
  }

  async getRule(tenantId: string, id: string): Promise<RuleView> {
    return ruleView(await this.ruleOf(tenantId, id));
  }

  async createRule(
    tenantId: string,
    input: RuleInput & Required<Pick<RuleInput, 'name' | 'window' | 'condition' | 'severity'>>,
    actor: LogsAuthContext,
    client: Client,
  ): Promise<RuleView> {
    const fields = this.validated(input);
    await this.ensureUniqueName(tenantId, fields.name);
    const at = this.nowIso();
    const row: AlertRuleRow = {
      id: randomUUID(),
      tenant_id: tenantId,
      ...fields,
      enabled: input.enabled === false ? 0 : 1,
      created_by: actor.username,
      created_at: at,
      updated_at: at,
      // Due at once: the first evaluation happens on the next tick.
      next_evaluation_at: null,
      last_evaluated_at: null,
      last_count: null,
      last_error: null,
      lease_until: null,
    };
    try {
      await this.deps.repository.insertRule(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw invalidBody(`rule "${fields.name}" already exists`);
      throw error;
    }
    await this.record(tenantId, actor, client, 'alert_rule.create', 'alert_rule', row.id, {
      name: row.name,
      severity: row.severity,
      enabled: row.enabled === 1,
    });
    return ruleView(row);
  }

  async updateRule(tenantId: string, id: string, input: RuleInput, actor: LogsAuthContext, client: Client): Promise<RuleView> {
    const rule = await this.ruleOf(tenantId, id);
    const current = ruleView(rule);
    const merged = {
      name: input.name ?? current.name,
      query: input.query ?? current.query,
      filters: input.filters ?? current.filters,
      window: input.window ?? current.window,
      condition: input.condition ?? { type: rule.condition, threshold: rule.condition === 'absent' ? undefined : rule.threshold },
      interval: input.interval ?? current.interval,
      severity: input.severity ?? rule.severity,
      labels: input.labels ?? current.labels,
      webhook: input.webhook === undefined ? (rule.webhook_url ? { url: rule.webhook_url } : null) : input.webhook,
    };
    const fields = this.validated(merged, rule);
    await this.ensureUniqueName(tenantId, fields.name, id);
    const changes: Partial<AlertRuleRow> = { ...fields, updated_at: this.nowIso(), next_evaluation_at: null };
    if (input.enabled !== undefined) changes.enabled = input.enabled ? 1 : 0;
    try {
      await this.deps.repository.updateRule(id, changes);
    } catch (error) {
      if (isUniqueViolation(error)) throw invalidBody(`rule "${fields.name}" already exists`);
      throw error;
    }
    const updated = { ...rule, ...changes };
    if (updated.enabled === 0) await this.closeOpenAlert(updated, 'rule disabled');
    await this.record(tenantId, actor, client, 'alert_rule.update', 'alert_rule', id, { name: updated.name, fields: Object.keys(input) });
    return ruleView(updated);
  }

  async setEnabled(tenantId: string, id: string, enabled: boolean, actor: LogsAuthContext, client: Client): Promise<RuleView> {
    const rule = await this.ruleOf(tenantId, id);
    const changes: Partial<AlertRuleRow> = {
      enabled: enabled ? 1 : 0,
      updated_at: this.nowIso(),
      ...(enabled ? { next_evaluation_at: null } : {}),
    };
    await this.deps.repository.updateRule(id, changes);
    const updated = { ...rule, ...changes };
    if (!enabled) await this.closeOpenAlert(updated, 'rule disabled');
    await this.record(tenantId, actor, client, enabled ? 'alert_rule.enable' : 'alert_rule.disable', 'alert_rule', id, { name: rule.name });
    return ruleView(updated);
  }

  /** Deletes the rule; its open alert resolves (system), its past alerts stay listed under the rule's name. */
  async deleteRule(tenantId: string, id: string, actor: LogsAuthContext, client: Client): Promise<void> {
    const rule = await this.ruleOf(tenantId, id);
    await this.closeOpenAlert(rule, 'rule deleted');
    await this.deps.repository.deleteRule(id);
    await this.record(tenantId, actor, client, 'alert_rule.delete', 'alert_rule', id, { name: rule.name });
  }

  private async closeOpenAlert(rule: AlertRuleRow, comment: string): Promise<void> {
    const open = await this.deps.repository.openAlertOf(rule.id);
    if (open) await this.deps.evaluator.resolve(rule, open, this.nowIso(), { comment });
  }

  // Alerts

  async getAlert(tenantId: string, id: string): Promise<AlertView> {
    const alert = await this.deps.repository.findAlert(tenantId, id);
    if (!alert) throw new AppError('LOGS_NOT_FOUND');
    return alertView(alert);
  }

  /** A user's state change (USER_TRANSITIONS): 404 unknown alert, 409 a refused transition, 400 a bad `until`. */
  async changeStatus(tenantId: string, id: string, input: StatusInput, actor: LogsAuthContext, client: Client): Promise<AlertView> {
    const alert = await this.deps.repository.findAlert(tenantId, id);
    if (!alert) throw new AppError('LOGS_NOT_FOUND');
    const from = alert.state;
    const to = input.status;
    if (!userMayChange(from, to)) {
      throw new AppError('LOGS_ALERT_INVALID_TRANSITION', { data: { detail: `an alert that is ${from} cannot become ${to}` } });
    }
    const nowMs = this.deps.now();
    const at = new Date(nowMs).toISOString();
    let until: string | undefined;
    if (to === 'silenced') {
      if (input.until === undefined) throw invalidBody('until is required to silence an alert');
      const untilMs = Date.parse(input.until);
      if (Number.isNaN(untilMs) || untilMs <= nowMs) throw invalidBody('until must be in the future');
      if (untilMs > nowMs + MAX_SILENCE_MS) throw invalidBody('until must be at most 30 days ahead');
      until = new Date(untilMs).toISOString();
    } else if (input.until !== undefined) {
      throw invalidBody('until is only used with silenced');
    }
    const entry: HistoryEntry = {
      at,
      actor: actor.username,
      actor_id: actor.userId,
      from,
      to,
      ...(input.comment ? { comment: input.comment } : {}),
      ...(until ? { until } : {}),
    };
    const changes: Partial<AlertRow> = { state: to, updated_at: at, history: appendHistory(alert, entry) };
    if (to === 'acknowledged') Object.assign(changes, { acknowledged_at: at, acknowledged_by: actor.username });
    if (to === 'silenced') changes.silenced_until = until!;
    if (to === 'firing') changes.silenced_until = null;
    if (to === 'resolved')
      Object.assign(changes, { resolved_at: at, resolved_by: actor.username, open_rule_id: null, silenced_until: null });
    // Conditional on the state we checked: a concurrent change (the evaluator resolving it) wins and this one is 409.
    if (!(await this.deps.repository.transition(id, from, changes))) {
      throw new AppError('LOGS_ALERT_INVALID_TRANSITION', { data: { detail: 'the alert changed meanwhile; reload it' } });
    }
    await this.record(tenantId, actor, client, 'alert.status', 'alert', id, {
      rule_id: alert.rule_id,
      rule_name: alert.rule_name,
      from,
      to,
      comment: input.comment,
      until,
    });
    const updated = { ...alert, ...changes };
    if (to === 'resolved') {
      const rule = await this.deps.repository.findRuleById(alert.rule_id);
      if (rule) this.deps.evaluator.notify(rule, updated, 'resolved');
    }
    return alertView(updated);
  }

  /** Firing and acknowledged alerts, newest first; with `includeSilenced`, every open one. */
  async active(tenantId: string, includeSilenced = false): Promise<AlertView[]> {
    const states = includeSilenced ? OPEN_STATES : ACTIVE_STATES;
    return (await this.deps.repository.listAlerts({ tenantId, states }, 1, 1000)).rows.map(alertView);
  }

  async list(tenantId: string, filter: AlertListFilter, page: number, limit: number): Promise<{ data: AlertView[]; total: number }> {
    const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());
    const { rows, total } = await this.deps.repository.listAlerts(
      {
        tenantId,
        states: filter.state ? [filter.state] : undefined,
        severity: filter.severity,
        ruleId: filter.rule_id,
        from: iso(filter.from),
        to: iso(filter.to),
      },
      page,
      limit,
    );
    return { data: rows.map(alertView), total };
  }

  /** For the dashboards: active (firing + acknowledged) alerts of the tenant per severity, every severity present (0 when none). */
  async activeCountsBySeverity(tenantId: string): Promise<Record<Severity, number>> {
    const counts: Record<Severity, number> = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
    for (const { severity, count } of await this.deps.repository.countBySeverity(tenantId, ACTIVE_STATES)) counts[severity] = count;
    return counts;
  }

  // Evaluation (the app's timer calls evaluateDue; tests call these directly with the injected clock)

  evaluateDue(): Promise<EvaluationResult[]> {
    return this.deps.evaluator.evaluateDue();
  }

  evaluateRule(id: string): Promise<EvaluationResult> {
    return this.deps.evaluator.evaluateRule(id);
  }
}
