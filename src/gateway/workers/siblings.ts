import type { Registry } from 'prom-client';
import { isWorkerMessage, type WorkerMessage } from './messages.js';

/** Longest a scrape waits for the primary to gather every worker's metrics. */
const METRICS_TIMEOUT_MS = 5_000;

/**
 * A worker's line to the other workers of its gateway (GATEWAY_WORKERS > 1), through the primary:
 * ended sessions reach their session caches at once, and /metrics answers with the sum over all
 * workers, whichever worker the scrape lands on.
 */
export class WorkerSiblings {
  private nextRequest = 0;
  private readonly pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private onSessionsEnded: ((ids: string[]) => void) | undefined;
  private readonly listener = (message: unknown) => {
    if (isWorkerMessage(message)) this.receive(message);
  };

  constructor(private readonly registry: Registry) {
    process.on('message', this.listener);
  }

  private send(message: WorkerMessage): void {
    // No channel: the primary is gone and this worker is on its way out.
    if (process.connected) process.send!(message);
  }

  private receive(message: WorkerMessage): void {
    switch (message.type) {
      case 'gerbang:sessions-ended':
        this.onSessionsEnded?.(message.ids);
        return;
      case 'gerbang:metrics-collect':
        this.registry.getMetricsAsJSON().then(
          (metrics) => this.send({ type: 'gerbang:metrics-part', collectId: message.collectId, metrics }),
          (error: unknown) => this.send({ type: 'gerbang:metrics-part', collectId: message.collectId, error: String(error) }),
        );
        return;
      case 'gerbang:metrics-response': {
        const request = this.pending.get(message.requestId);
        if (!request) return;
        this.pending.delete(message.requestId);
        clearTimeout(request.timer);
        if (message.text !== undefined) request.resolve(message.text);
        else request.reject(new Error(`metrics of the other workers unavailable: ${message.error ?? 'no answer'}`));
        return;
      }
      default:
    }
  }

  /** Sessions another worker ended are handed to `handler`. */
  whenSessionsEnd(handler: (ids: string[]) => void): void {
    this.onSessionsEnded = handler;
  }

  /** Tells the other workers that these sessions ended. */
  announceEndedSessions(ids: readonly string[]): void {
    if (ids.length > 0) this.send({ type: 'gerbang:sessions-ended', ids: [...ids] });
  }

  /** Every worker's metrics summed, in the Prometheus text format. */
  clusterMetrics(): Promise<string> {
    const requestId = this.nextRequest++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new Error('metrics of the other workers unavailable: no answer in time'));
      }, METRICS_TIMEOUT_MS);
      this.pending.set(requestId, { resolve, reject, timer });
      this.send({ type: 'gerbang:metrics-request', requestId });
    });
  }

  close(): void {
    process.removeListener('message', this.listener);
    for (const request of this.pending.values()) {
      clearTimeout(request.timer);
      request.reject(new Error('the gateway is shutting down'));
    }
    this.pending.clear();
  }
}
