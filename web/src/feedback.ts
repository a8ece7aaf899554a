import { ApiError, UnreachableError } from './api.js';
import { button, el } from './dom.js';
import { words } from './i18n.js';

/** How long before a call the service did not answer is tried again by itself. */
const RETRY_MS = 5000;

/**
 * What a failed call shows: a 403 says plainly that the API refused it for this account, a 503 the
 * service's reason (e.g. "kubernetes not configured"), a service that did not answer that it is
 * not reachable (with `retry`: a button to try now, and a try by itself every few seconds while the
 * message is on screen), anything else the API's own message.
 */
export function problem(error: unknown, retry?: () => void): HTMLElement {
  const t = words();
  if (error instanceof UnreachableError) {
    const node = el('p', { className: 'error unreachable', role: 'alert', textContent: t.unreachable });
    if (retry) {
      node.append(' ', button(t.retryNow, retry, { className: 'retry' }));
      const timer = setTimeout(() => {
        if (node.isConnected) retry();
      }, RETRY_MS);
      node.addEventListener('click', () => clearTimeout(timer));
    }
    return node;
  }
  if (error instanceof ApiError && error.status === 403)
    return el('p', { className: 'error forbidden', role: 'alert', id: 'forbidden', textContent: `${t.forbidden} (403 ${error.full})` });
  const message = error instanceof ApiError ? `${error.full} (${error.status})` : error instanceof Error ? error.message : String(error);
  return el('p', { className: 'error', role: 'alert', textContent: message });
}

/** Runs a loader into `target`, showing what went wrong instead when it fails. */
export async function into(target: HTMLElement, load: () => Promise<Node>): Promise<void> {
  try {
    target.replaceChildren(await load());
  } catch (error) {
    target.replaceChildren(problem(error));
  }
}
