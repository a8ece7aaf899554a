import { setTimeout as delay } from 'node:timers/promises';

/**
 * Retries an assertion until it passes (or `timeoutMs` runs out, then throws its last failure):
 * for conditions another process makes true at a time of its own, such as a background shipment.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await delay(everyMs);
    }
  }
}
