import type { Registry } from 'prom-client';

/** One worker's metrics, as prom-client's `getMetricsAsJSON` gives them. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** What the workers of one gateway and their primary say to each other over the cluster's IPC channel. */
export type WorkerMessage =
  /** worker -> primary -> every other worker: these sessions ended (logout, password change, ...). */
  | { type: 'gerbang:sessions-ended'; ids: string[] }
  /** worker -> primary: a scrape of /metrics wants the sum over all workers. */
  | { type: 'gerbang:metrics-request'; requestId: number }
  /** primary -> worker: the answer to that request. */
  | { type: 'gerbang:metrics-response'; requestId: number; text?: string; error?: string }
  /** primary -> every worker: send your metrics. */
  | { type: 'gerbang:metrics-collect'; collectId: number }
  /** worker -> primary: its metrics. */
  | { type: 'gerbang:metrics-part'; collectId: number; metrics?: MetricsJson; error?: string };

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { type?: unknown }).type === 'string' &&
    (message as { type: string }).type.startsWith('gerbang:')
  );
}
