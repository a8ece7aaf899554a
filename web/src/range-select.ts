import { el } from './dom.js';
import { words } from './i18n.js';
import { changed, type PageContext } from './page.js';

/** Relative ranges the operations pages offer. */
export const RELATIVE: Record<string, number> = {
  '15m': 900_000,
  '1h': 3_600_000,
  '6h': 21_600_000,
  '24h': 86_400_000,
};

/**
 * The page's relative time range (`range` in the URL, 1h by default) as a labelled select, and the
 * absolute range it means now.
 */
export function rangeSelect(ctx: PageContext, id: string, ranges = RELATIVE): { control: HTMLElement; from: string; to: string } {
  const t = words();
  const key = ranges[ctx.params.get('range') ?? ''] ? ctx.params.get('range')! : '1h';
  const select = el('select', { id }, ...Object.keys(ranges).map((k) => el('option', { value: k, textContent: `${t.last} ${k}` })));
  select.value = key;
  select.addEventListener('change', () => ctx.navigate(changed(ctx.params, { range: select.value, page: null })));
  const now = Date.now();
  return {
    control: el('span', { className: 'control' }, el('label', { htmlFor: id, textContent: t.range }), select),
    from: new Date(now - ranges[key]!).toISOString(),
    to: new Date(now).toISOString(),
  };
}
