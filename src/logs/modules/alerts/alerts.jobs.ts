import type { Job, LeadingPart } from '../../../shared/lifecycle.js';
import type { AlertEvaluator } from './alerts.evaluator.js';
import type { WebhookNotifier } from './alerts.notifier.js';

/**
 * Due rules are evaluated every `intervalMs` (LOGS_ALERT_EVAL_INTERVAL; 0: never) by the instance
 * that leads (the first pass an interval after it starts leading); each pass then queues the notifications other
 * instances recorded (AlertEvaluator.resumeWebhooks). At close the pass in flight finishes, then
 * the webhooks still queued or being sent are abandoned: they stay `pending` or `retrying` on their
 * alert and are sent by the next leader.
 */
export function alertEvaluationJob(evaluator: AlertEvaluator, notifier: WebhookNotifier, intervalMs: number): Job {
  return {
    name: 'alert evaluation',
    intervalMs,
    elected: true,
    run: async () => {
      await evaluator.evaluateDue();
      await evaluator.resumeWebhooks();
    },
    close: () => notifier.close(),
  };
}

/**
 * Webhooks are delivered by the instance that leads (alerts.notifier.ts): from when it starts
 * leading, beginning with what a stopped process or the last leader left unfinished, until it stops.
 */
export function alertWebhooksPart(evaluator: AlertEvaluator, notifier: WebhookNotifier, onError: (error: unknown) => void): LeadingPart {
  let resuming: Promise<unknown> = Promise.resolve();
  return {
    lead: () => {
      notifier.deliver();
      resuming = evaluator.resumeWebhooks().catch(onError);
    },
    stepDown: async () => {
      await resuming;
      notifier.standBy();
    },
  };
}
