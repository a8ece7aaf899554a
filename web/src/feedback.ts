import { ApiError } from './api.js';
import { el } from './dom.js';
import { words } from './i18n.js';

/**
 * What a failed call shows: a 403 says plainly that the API refused it for this account, a 503 the
 * service's reason (e.g. "kubernetes not configured"), anything else the API's own message.
 */
export function problem(error: unknown): HTMLElement {
  const t = words();
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
