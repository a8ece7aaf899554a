import { el } from '../dom.js';
import { alertWords } from './words.js';

/**
 * "Create an alert from this search": a link to the rule editor with the Explore page's query and
 * range in the URL (`#/alerts?view=rules&new=1&query=…&window=1h`). A relative range is the rule's
 * window as it is; an absolute one becomes its length, within the API's 10s–7d.
 */

const MIN_WINDOW_MS = 10_000;
const MAX_WINDOW_MS = 604_800_000;

/** A length in ms as the API's shortest whole duration (7d, 90m, 45s). */
export function windowOf(ms: number): string {
  const clamped = Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, Math.round(ms / 1000) * 1000));
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const)
    if (clamped % size === 0) return `${clamped / size}${unit}`;
  return `${clamped / 1000}s`;
}

/** The rule editor's address for the Explore page's search (`q`, and `range` or `from`/`to`). */
export function alertFromSearchHref(params: URLSearchParams): string {
  const from = Date.parse(params.get('from') ?? '');
  const to = Date.parse(params.get('to') ?? '');
  const window = !Number.isNaN(from) && !Number.isNaN(to) && to > from ? windowOf(to - from) : (params.get('range') ?? '1h');
  const next = new URLSearchParams({ view: 'rules', new: '1', query: params.get('q') ?? '', window });
  return `#/alerts?${next.toString()}`;
}

export function alertFromSearchLink(params: URLSearchParams): HTMLElement {
  return el('a', {
    id: 'alert-from-search',
    className: 'alert-from-search',
    href: alertFromSearchHref(params),
    textContent: alertWords().createAlertFromSearch,
  });
}
