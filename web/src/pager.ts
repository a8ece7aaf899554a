import { button, el } from './dom.js';
import { words } from './i18n.js';
import { changed, type PageContext } from './page.js';

/** Previous / next through a paged list; the page number is in the URL. */
export function pager(ctx: PageContext, page: number, pages: number): HTMLElement {
  const t = words();
  return el(
    'nav',
    { className: 'pager', ariaLabel: t.page },
    button(t.previous, () => ctx.navigate(changed(ctx.params, { page: String(page - 1) })), { disabled: page <= 1, id: 'previous' }),
    el('span', { id: 'page-number', textContent: `${t.page} ${page} ${t.of} ${Math.max(1, pages)}` }),
    button(t.next, () => ctx.navigate(changed(ctx.params, { page: String(page + 1) })), { disabled: page >= pages, id: 'next' }),
  );
}
