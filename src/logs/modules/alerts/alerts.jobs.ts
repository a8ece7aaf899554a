import type { Job } from '../../../shared/lifecycle.js';
import type { AlertEvaluator } from './alerts.evaluator.js';
import type { WebhookNotifier } from './alerts.notifier.js';

/**
 * Due rules are evaluated every `intervalMs` (LOGS_ALERT_EVAL_INTERVAL; 0: never). At close the
 * pass in flight finishes, then the webhooks still queued or being sent are abandoned: they stay
 * `pending` or `retrying` on their alert and are sent at the next start (resumeWebhooks).
 */
export function alertEvaluationJob(evaluator: AlertEvaluator, notifier: WebhookNotifier, intervalMs: number): Job {
  return {
    name: 'alert evaluation',
    intervalMs,
    run: () => evaluator.evaluateDue(),
    close: () => notifier.close(),
  };
}
