/** The alerts' vocabulary. No imports here: the schemas, and through them the console's types, read it. */

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const CONDITIONS = ['above', 'below', 'absent'] as const;
export type ConditionType = (typeof CONDITIONS)[number];
export const ALERT_STATES = ['firing', 'acknowledged', 'silenced', 'resolved'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/**
 * The alert state machine, in one place (docs/alerts.md has the same table).
 *
 * Changes a user asks for with POST /api/v1/alerts/{id}/status. Everything else is refused (409):
 * resolved is final, and asking for the state an alert is already in is refused too, except
 * silenced -> silenced, which moves the end of the silence.
 */
export const USER_TRANSITIONS: Readonly<Record<AlertState, readonly AlertState[]>> = {
  firing: ['acknowledged', 'silenced', 'resolved'],
  acknowledged: ['silenced', 'resolved'],
  silenced: ['firing', 'silenced', 'resolved'],
  resolved: [],
};

/**
 * Changes the evaluator makes by itself (actor `system`):
 * - (none) -> firing: the rule's condition holds and the rule has no open alert;
 * - firing | acknowledged | silenced -> resolved: the condition no longer holds (resolved_by `system`),
 *   or the rule was disabled or deleted;
 * - silenced -> firing: the silence's `until` has passed and the alert is still open.
 */
export const SYSTEM_TRANSITIONS: Readonly<Record<AlertState, readonly AlertState[]>> = {
  firing: ['resolved'],
  acknowledged: ['resolved'],
  silenced: ['firing', 'resolved'],
  resolved: [],
};

/** Open = not resolved: at most one per rule (enforced by a unique index). */
export const OPEN_STATES: readonly AlertState[] = ['firing', 'acknowledged', 'silenced'];
/** What GET /alerts/active lists and the dashboards count. */
export const ACTIVE_STATES: readonly AlertState[] = ['firing', 'acknowledged'];

export function userMayChange(from: AlertState, to: AlertState): boolean {
  return USER_TRANSITIONS[from].includes(to);
}
