import { createHmac } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AlertsRepository } from './alerts.repository.js';
import { isLocalhostName, literalAddress, WebhookAllowList } from './webhook-address.js';

export interface WebhookSettings {
  /** Per attempt. */
  readonly timeoutMs: number;
  /** Attempts in all (1 = no retry). */
  readonly attempts: number;
  /** Wait before the 2nd attempt; doubled before each later one. */
  readonly backoffMs: number;
  /** LOGS_WEBHOOK_ALLOWED_HOSTS (webhook-address.ts): names restrict, addresses/CIDRs open internal ranges. */
  readonly allowedHosts: readonly string[];
}

export interface WebhookJob {
  alertId: string;
  event: 'firing' | 'resolved';
  url: string;
  secret: string | null;
  payload: object;
}

/** Notifications waiting beyond this are dropped (and the alert says so): memory stays bounded if a receiver is down. */
const MAX_QUEUED = 1000;
const CONCURRENCY = 4;

/** What a user sees of any failed attempt: the same word for a refused connection, a timeout, a 404 or a blocked address. */
export const DELIVERY_FAILED = 'failed';

const allowLists = new WeakMap<readonly string[], WebhookAllowList>();
function allowListOf(allowedHosts: readonly string[]): WebhookAllowList {
  let list = allowLists.get(allowedHosts);
  if (!list) allowLists.set(allowedHosts, (list = new WebhookAllowList(allowedHosts)));
  return list;
}

/**
 * Why a webhook URL is refused, or undefined when it is acceptable: http/https, no credentials,
 * host allowed, and not an internal address literal (names are checked on their resolved address
 * at each delivery).
 */
export function webhookUrlProblem(url: string, allowedHosts: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'webhook.url must be an absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'webhook.url must be an http or https URL';
  if (parsed.username || parsed.password) return 'webhook.url must not carry credentials (use webhook.secret)';
  const allowList = allowListOf(allowedHosts);
  if (!allowList.allowsHost(parsed.hostname)) return `webhook.url host "${parsed.hostname}" is not in LOGS_WEBHOOK_ALLOWED_HOSTS`;
  // `localhost` is refused as the loopback address it names, before any resolver is asked.
  const address = literalAddress(parsed.hostname) ?? (isLocalhostName(parsed.hostname) ? '127.0.0.1' : undefined);
  const kind = address === undefined ? undefined : allowList.addressProblem(address);
  if (kind !== undefined)
    return `webhook.url host "${parsed.hostname}" is a ${kind} address; list it in LOGS_WEBHOOK_ALLOWED_HOSTS (address or CIDR) to allow it`;
  return undefined;
}

/** The signature header value: HMAC-SHA256 over `<timestamp>.<body>` with the rule's secret, hex. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface WebhookNotifierDeps {
  settings: WebhookSettings;
  alerts: AlertsRepository;
  now: () => number;
  /** A failed bookkeeping step, for the service's log. */
  onError?: ((error: unknown) => void) | undefined;
  /** The real reason of a failed attempt, for the service's own log (users only see `failed`). */
  onDeliveryFailure?: ((details: { alertId: string; attempt: number; reason: string }) => void) | undefined;
  /** Every attempt's outcome (metrics); `refused`: the address policy said no. */
  onAttempt?: ((outcome: 'delivered' | 'failed' | 'refused', attempt: number) => void) | undefined;
}

/**
 * Delivers alert webhooks in the background: the evaluator only enqueues, so a slow or dead
 * receiver never delays an evaluation. Each job is POSTed with a timeout and retried with
 * exponential backoff; every attempt's outcome is written on the alert (webhook_status,
 * webhook_attempts, webhook_last_error, webhook_last_at). The queue is in memory; what a stopped
 * process left `pending` or `retrying` is queued again by the leader (AlertEvaluator.resumeWebhooks).
 *
 * Only the instance that leads delivers (deliver(); docs/log-store.md, "Several instances"): on the
 * others a notification is recorded `pending` on its alert and the leader sends it at its next pass,
 * so a notification is sent by one instance, and a leader's end hands its queue to the next one.
 */
export class WebhookNotifier {
  private readonly queue: WebhookJob[] = [];
  private running = 0;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly controllers = new Set<AbortController>();
  private waiters: (() => void)[] = [];
  private readonly writes = new WeakMap<WebhookJob, Promise<void>>();
  /** Jobs queued, running or waiting for a retry. */
  private outstanding = 0;
  /** Whether this instance delivers (it leads); until deliver(), notifications are only recorded. */
  private delivering = false;
  /** Changes at each standBy: an attempt of an earlier lead neither records nor retries. */
  private generation = 0;
  /**
   * The notifications (alert and event) this lead queued: null while outstanding, else the pickup
   * pass in which it finished (a pass that read the alert before that still saw it `pending`).
   */
  private readonly handled = new Map<string, number | null>();
  private pickups = 0;
  private readonly generations = new WeakMap<WebhookJob, number>();

  constructor(private readonly deps: WebhookNotifierDeps) {}

  /** This instance leads: notifications are delivered from now on. */
  deliver(): void {
    if (!this.closed) this.delivering = true;
  }

  /**
   * This instance stops leading: queued notifications are forgotten and running attempts aborted;
   * they stay `pending` or `retrying` on their alerts, and the next leader sends them.
   */
  standBy(): void {
    this.delivering = false;
    this.generation += 1;
    this.queue.length = 0;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.controllers) controller.abort();
    this.handled.clear();
    this.outstanding = 0;
    this.settle();
  }

  /**
   * Starts a pass over the unfinished notifications on the alerts (AlertEvaluator.resumeWebhooks):
   * the answer tells those this lead already has, queued or finished since the last pass began.
   */
  startPickup(): (alertId: string, event: WebhookJob['event']) => boolean {
    const pass = ++this.pickups;
    for (const [key, finished] of this.handled) if (finished !== null && finished < pass - 1) this.handled.delete(key);
    return (alertId, event) => this.handled.has(`${alertId}\u0000${event}`);
  }

  /** Queues a notification (recorded `pending`; delivered here if this instance leads); never waits for delivery. */
  enqueue(job: WebhookJob): void {
    if (this.closed) return;
    if (!this.delivering) {
      void this.record(job, { webhook_status: 'pending', webhook_attempts: 0, webhook_last_error: null });
      return;
    }
    if (this.queue.length >= MAX_QUEUED) {
      void this.record(job, { webhook_status: 'dropped', webhook_last_error: 'notification queue full' });
      return;
    }
    this.outstanding += 1;
    this.generations.set(job, this.generation);
    this.handled.set(`${job.alertId}\u0000${job.event}`, null);
    this.queue.push(job);
    void this.record(job, { webhook_status: 'pending', webhook_attempts: 0, webhook_last_error: null });
    this.pump();
  }

  /** Resolves once every queued notification has been delivered or has failed for good (tests wait on this). */
  idle(): Promise<void> {
    if (this.outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops: queued notifications are forgotten, running attempts aborted. */
  close(): void {
    this.closed = true;
    this.standBy();
  }

  private pump(): void {
    while (!this.closed && this.running < CONCURRENCY && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running += 1;
      void this.attempt(job, 1).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  private settle(): void {
    if (this.outstanding > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private done(job: WebhookJob): void {
    if (this.stale(job)) return;
    this.handled.set(`${job.alertId}\u0000${job.event}`, this.pickups);
    this.outstanding = Math.max(0, this.outstanding - 1);
    this.settle();
  }

  /** The job belongs to an earlier lead (or the notifier closed): it neither records nor retries. */
  private stale(job: WebhookJob): boolean {
    return this.closed || this.generations.get(job) !== this.generation;
  }

  private async attempt(job: WebhookJob, attempt: number): Promise<void> {
    // Checked again at delivery (the allow-list may have changed since the rule was saved); a refusal is final, not retried.
    const refused = webhookUrlProblem(job.url, this.deps.settings.allowedHosts);
    const reason = refused ?? (await this.post(job));
    if (this.stale(job)) return;
    if (reason !== undefined && refused === undefined) this.deps.onDeliveryFailure?.({ alertId: job.alertId, attempt, reason });
    // A policy refusal speaks of the rule's own URL; anything the network or receiver did is just `failed`.
    const error = refused ?? (reason === undefined ? undefined : DELIVERY_FAILED);
    this.deps.onAttempt?.(refused !== undefined ? 'refused' : reason === undefined ? 'delivered' : 'failed', attempt);
    const at = new Date(this.deps.now()).toISOString();
    if (error === undefined) {
      await this.record(job, { webhook_status: 'delivered', webhook_attempts: attempt, webhook_last_error: null, webhook_last_at: at });
      this.done(job);
      return;
    }
    if (refused !== undefined || attempt >= this.deps.settings.attempts) {
      await this.record(job, { webhook_status: 'failed', webhook_attempts: attempt, webhook_last_error: error, webhook_last_at: at });
      this.done(job);
      return;
    }
    await this.record(job, { webhook_status: 'retrying', webhook_attempts: attempt, webhook_last_error: error, webhook_last_at: at });
    // The retry waits outside the worker slots: a backoff never holds up other alerts' notifications.
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (this.stale(job)) return;
        this.running += 1;
        void this.attempt(job, attempt + 1).finally(() => {
          this.running -= 1;
          this.pump();
        });
      },
      this.deps.settings.backoffMs * 2 ** (attempt - 1),
    );
    this.timers.add(timer);
  }

  /**
   * One POST; undefined on a 2xx, else the real reason (for the service log only). Every connection
   * goes through the allow-list: literal addresses are checked here, names in `lookup` on each
   * resolved address. No redirects are followed and no response body is read.
   */
  private post(job: WebhookJob): Promise<string | undefined> {
    const body = JSON.stringify(job.payload);
    const timestamp = String(Math.floor(this.deps.now() / 1000));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'gerbang-logs-alerts/1',
      'x-gerbang-event': job.event,
      'x-gerbang-timestamp': timestamp,
    };
    if (job.secret) headers['x-gerbang-signature'] = webhookSignature(job.secret, timestamp, body);
    const url = new URL(job.url);
    const allowList = allowListOf(this.deps.settings.allowedHosts);
    const literal = literalAddress(url.hostname);
    const blocked = literal === undefined ? undefined : allowList.addressProblem(literal);
    if (blocked !== undefined) return Promise.resolve(`refused: a ${blocked} address`);
    const controller = new AbortController();
    this.controllers.add(controller);
    const timer = setTimeout(() => controller.abort(), this.deps.settings.timeoutMs);
    return new Promise<string | undefined>((resolve) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      // A fresh connection per attempt (no pooled socket outlives the check), through the guarded lookup.
      const request = send(
        url,
        { method: 'POST', headers, agent: false, lookup: allowList.lookup, signal: controller.signal },
        (response: IncomingMessage) => {
          response.resume();
          response.on('error', () => {});
          const status = response.statusCode ?? 0;
          resolve(status >= 200 && status < 300 ? undefined : `HTTP ${status}`);
        },
      );
      request.on('error', (error: Error & { code?: string }) => {
        if (controller.signal.aborted) resolve(this.closed ? 'stopped' : `timeout after ${this.deps.settings.timeoutMs}ms`);
        else resolve(error.code === 'EWEBHOOKBLOCKED' ? error.message : `connection failed${error.code ? ` (${error.code})` : ''}`);
      });
      request.end(body);
    }).finally(() => {
      clearTimeout(timer);
      this.controllers.delete(controller);
    });
  }

  /** Writes a job's delivery state; a job's writes are chained so they land in order on any pool. */
  private record(job: WebhookJob, changes: Parameters<AlertsRepository['updateAlert']>[1]): Promise<void> {
    const previous = this.writes.get(job) ?? Promise.resolve();
    const next = previous.then(async () => {
      try {
        await this.deps.alerts.updateAlert(job.alertId, { webhook_event: job.event, ...changes });
      } catch (error) {
        this.deps.onError?.(error);
      }
    });
    this.writes.set(job, next);
    return next;
  }
}
