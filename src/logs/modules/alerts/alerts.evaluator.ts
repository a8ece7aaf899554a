import { randomUUID } from 'node:crypto';
import type { LogsAuditRepository } from '../audit/audit.repository.js';
import type { LogStore } from '../store/log-store.js';
import { searchCondition, type FieldFilter } from '../query/condition.js';
import type { WebhookNotifier } from './alerts.notifier.js';
import { isUniqueViolation, type AlertRow, type AlertRuleRow, type AlertsRepository, type HistoryEntry } from './alerts.repository.js';
import { webhookPayload } from './alerts.views.js';

/** How long an evaluation may hold its rule before another evaluator may take it (a crashed process's lease ends). */
const LEASE_MS = 120_000;
/** Rules evaluated per evaluateDue() pass; the rest wait for the next tick. */
const DUE_BATCH = 500;
/** At most this many unfinished notifications are queued again at start (the notifier's queue bound). */
const RESUME_LIMIT = 1000;

export interface EvaluationResult {
  ruleId: string;
  /** False when the rule is disabled, gone, or being evaluated elsewhere. */
  evaluated: boolean;
  count?: number | undefined;
  holds?: boolean | undefined;
  /** The alert opened by this evaluation. */
  opened?: string | undefined;
  /** The alert resolved by this evaluation. */
  resolved?: string | undefined;
  error?: string | undefined;
}

/** Whether the rule's condition holds for `count` matching logs in its window. */
export function conditionHolds(rule: Pick<AlertRuleRow, 'condition' | 'threshold'>, count: number): boolean {
  switch (rule.condition) {
    case 'above':
      return count > rule.threshold;
    case 'below':
      return count < rule.threshold;
    case 'absent':
      return count === 0;
  }
}

export function historyEntry(
  from: HistoryEntry['from'],
  to: HistoryEntry['to'],
  at: string,
  extra: Partial<HistoryEntry> = {},
): HistoryEntry {
  return { at, actor: 'system', actor_id: null, from, to, ...extra };
}

export function appendHistory(row: AlertRow, entry: HistoryEntry): string {
  return JSON.stringify([...(JSON.parse(row.history) as HistoryEntry[]), entry]);
}

export interface AlertEvaluatorDeps {
  repository: AlertsRepository;
  store: LogStore;
  notifier: WebhookNotifier;
  audit: LogsAuditRepository;
  now: () => number;
  /** A failed evaluation, for the service's log. */
  onError?: ((error: unknown) => void) | undefined;
  /** Every evaluation's outcome (metrics). */
  onEvaluated?: ((outcome: 'holds' | 'clear' | 'error') => void) | undefined;
}

/**
 * Runs alert rules against the log store. Each rule runs on its own interval (next_evaluation_at
 * in the database, so the schedule survives restarts). One evaluation at a time per rule: an
 * in-process set plus a lease row update that a second process cannot take. The open alert is
 * unique per rule in the database, so even a race cannot open two.
 */
export class AlertEvaluator {
  private readonly running = new Set<string>();

  constructor(private readonly deps: AlertEvaluatorDeps) {}

  /** Ends expired silences, then evaluates every enabled rule that is due, one after another. */
  async evaluateDue(): Promise<EvaluationResult[]> {
    await this.endExpiredSilences();
    const due = await this.deps.repository.dueRules(new Date(this.deps.now()).toISOString(), DUE_BATCH);
    const results: EvaluationResult[] = [];
    for (const rule of due) {
      try {
        results.push(await this.evaluateRule(rule.id));
      } catch (error) {
        // One rule's failure (e.g. the database busy) must not stop the others; it is due again next tick.
        this.deps.onError?.(error);
        results.push({
          ruleId: rule.id,
          evaluated: false,
          error: error instanceof Error ? error.message.slice(0, 500) : 'evaluation failed',
        });
      }
    }
    return results;
  }

  /** Evaluates one rule now, whatever its schedule (unless disabled or already being evaluated). */
  async evaluateRule(ruleId: string): Promise<EvaluationResult> {
    if (this.running.has(ruleId)) return { ruleId, evaluated: false };
    this.running.add(ruleId);
    let leased = false;
    try {
      const nowMs = this.deps.now();
      const nowIso = new Date(nowMs).toISOString();
      if (!(await this.deps.repository.lease(ruleId, nowIso, new Date(nowMs + LEASE_MS).toISOString())))
        return { ruleId, evaluated: false };
      leased = true;
      const rule = await this.deps.repository.findRuleById(ruleId);
      if (!rule || rule.enabled !== 1) {
        return { ruleId, evaluated: false };
      }
      const next = new Date(nowMs + rule.interval_ms).toISOString();
      let count: number;
      try {
        count = await this.count(rule, nowMs);
      } catch (error) {
        const message = error instanceof Error ? error.message.slice(0, 500) : 'evaluation failed';
        await this.deps.repository.updateRule(ruleId, {
          last_evaluated_at: nowIso,
          next_evaluation_at: next,
          last_error: message,
          lease_until: null,
        });
        leased = false;
        this.deps.onError?.(error);
        this.deps.onEvaluated?.('error');
        return { ruleId, evaluated: true, error: message };
      }
      const holds = conditionHolds(rule, count);
      this.deps.onEvaluated?.(holds ? 'holds' : 'clear');
      const result: EvaluationResult = { ruleId, evaluated: true, count, holds };
      const open = await this.deps.repository.openAlertOf(ruleId);
      if (holds && !open) result.opened = await this.open(rule, count, nowIso);
      if (holds && open) await this.deps.repository.updateAlert(open.id, { last_count: count });
      if (!holds && open) {
        if (await this.resolve(rule, open, nowIso, { last_count: count })) result.resolved = open.id;
      }
      await this.deps.repository.updateRule(ruleId, {
        last_evaluated_at: nowIso,
        next_evaluation_at: next,
        last_count: count,
        last_error: null,
        lease_until: null,
      });
      leased = false;
      return result;
    } finally {
      // On an unexpected error the lease is given back at once rather than after LEASE_MS.
      if (leased) await this.deps.repository.updateRule(ruleId, { lease_until: null }).catch(() => {});
      this.running.delete(ruleId);
    }
  }

  /** Matching logs of the rule's tenant in [now - window, now). The store's `to` is inclusive. */
  private async count(rule: AlertRuleRow, nowMs: number): Promise<number> {
    const result = await this.deps.store.search({
      tenantId: rule.tenant_id,
      condition: searchCondition(rule.query, JSON.parse(rule.filters) as FieldFilter[]),
      from: nowMs - rule.window_ms,
      to: nowMs - 1,
      page: 1,
      limit: 1,
    });
    return result.total;
  }

  private async open(rule: AlertRuleRow, count: number, nowIso: string): Promise<string | undefined> {
    const row: AlertRow = {
      id: randomUUID(),
      tenant_id: rule.tenant_id,
      rule_id: rule.id,
      open_rule_id: rule.id,
      rule_name: rule.name,
      severity: rule.severity,
      labels: rule.labels,
      state: 'firing',
      started_at: nowIso,
      updated_at: nowIso,
      acknowledged_at: null,
      acknowledged_by: null,
      silenced_until: null,
      resolved_at: null,
      resolved_by: null,
      last_count: count,
      history: JSON.stringify([historyEntry(null, 'firing', nowIso, { comment: 'condition holds' })]),
      webhook_event: null,
      webhook_status: null,
      webhook_attempts: null,
      webhook_last_error: null,
      webhook_last_at: null,
    };
    try {
      await this.deps.repository.insertAlert(row);
    } catch (error) {
      // Another evaluator opened it first: the database keeps one open alert per rule.
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
    await this.audited(row, null, 'firing', 'condition holds', count);
    this.notify(rule, row, 'firing');
    return row.id;
  }

  /**
   * Resolves an open alert as `system` (condition no longer holds, rule disabled or deleted). False
   * when the alert changed state meanwhile (a user's change wins; the next evaluation sees it).
   */
  async resolve(
    rule: AlertRuleRow,
    alert: AlertRow,
    nowIso: string,
    extra: { last_count?: number; comment?: string } = {},
  ): Promise<boolean> {
    const changes: Partial<AlertRow> = {
      state: 'resolved',
      open_rule_id: null,
      resolved_at: nowIso,
      resolved_by: 'system',
      updated_at: nowIso,
      history: appendHistory(
        alert,
        historyEntry(alert.state, 'resolved', nowIso, { comment: extra.comment ?? 'condition no longer holds' }),
      ),
      ...(extra.last_count !== undefined ? { last_count: extra.last_count } : {}),
    };
    if (!(await this.deps.repository.transition(alert.id, alert.state, changes))) return false;
    await this.audited(alert, alert.state, 'resolved', extra.comment ?? 'condition no longer holds', extra.last_count ?? alert.last_count);
    this.notify(rule, { ...alert, ...changes }, 'resolved');
    return true;
  }

  /** Silenced alerts whose `until` has passed fire again (they are still open: their condition held last time). */
  private async endExpiredSilences(): Promise<void> {
    const nowIso = new Date(this.deps.now()).toISOString();
    for (const alert of await this.deps.repository.expiredSilences(nowIso, DUE_BATCH)) {
      const changed = await this.deps.repository.transition(alert.id, 'silenced', {
        state: 'firing',
        silenced_until: null,
        updated_at: nowIso,
        history: appendHistory(alert, historyEntry('silenced', 'firing', nowIso, { comment: 'silence ended' })),
      });
      if (changed) await this.audited(alert, 'silenced', 'firing', 'silence ended', alert.last_count);
    }
  }

  /** The system's own state changes go to the audit trail too (actor `system`), like a user's `alert.status`. */
  private async audited(
    alert: AlertRow,
    from: AlertRow['state'] | null,
    to: AlertRow['state'],
    comment: string,
    count: number,
  ): Promise<void> {
    try {
      await this.deps.audit.record({
        tenantId: alert.tenant_id,
        action: 'alert.status',
        outcome: 'success',
        actorId: null,
        actor: 'system',
        targetType: 'alert',
        targetId: alert.id,
        details: { rule_id: alert.rule_id, rule_name: alert.rule_name, from, to, comment, count },
      });
    } catch (error) {
      // The alert's own history already holds the change; a failed audit write must not undo it.
      this.deps.onError?.(error);
    }
  }

  /**
   * Queues the unfinished notifications (webhook status `pending` or `retrying` on the alert) that
   * this instance does not have already: those a stopped process or an earlier leader left, and
   * those recorded by instances that do not lead. Rebuilt from the alert and its rule as they are
   * now. Run by the leader when it starts leading and after each evaluation pass: delivery is at
   * least once, so a receiver may see a notification twice (alert id and event tell).
   */
  async resumeWebhooks(): Promise<number> {
    let resumed = 0;
    const queuedHere = this.deps.notifier.startPickup();
    for (const alert of await this.deps.repository.unfinishedWebhooks(RESUME_LIMIT)) {
      const event = alert.webhook_event === 'resolved' ? 'resolved' : 'firing';
      if (queuedHere(alert.id, event)) continue;
      const rule = await this.deps.repository.findRuleById(alert.rule_id);
      if (!rule?.webhook_url) {
        await this.deps.repository.updateAlert(alert.id, {
          webhook_status: 'failed',
          webhook_last_error: 'the rule has no webhook any more',
        });
        continue;
      }
      this.notify(rule, alert, event);
      resumed += 1;
    }
    return resumed;
  }

  /** Queues the rule's webhook, if it has one; never waits for it. */
  notify(rule: AlertRuleRow, alert: AlertRow, event: 'firing' | 'resolved'): void {
    if (!rule.webhook_url) return;
    this.deps.notifier.enqueue({
      alertId: alert.id,
      event,
      url: rule.webhook_url,
      secret: rule.webhook_secret,
      payload: webhookPayload(rule, alert, event, this.deps.now()),
    });
  }
}
