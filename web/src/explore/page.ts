import { alertFromSearchLink } from '../alerts/from-search.js';
import { api, ApiError } from '../api.js';
import type { HistogramBody, HistogramResponse, LogEntry, PageResponse, SearchBody } from '../api-types.js';
import { el } from '../dom.js';
import { problem } from '../feedback.js';
import { count } from '../format.js';
import { words } from '../i18n.js';
import { changed, type PageContext, type View } from '../page.js';
import { entryDetail } from './detail.js';
import { fieldsSidebar } from './fields.js';
import { histogram, histogramFigure } from './histogram.js';
import { patternsPanel } from './patterns.js';
import { queryBar } from './query-bar.js';
import { resultsTable } from './results.js';
import { timeRange, withFilter } from './search.js';

/**
 * The explore page: query bar, histogram (drag to zoom), the entries newest first (scrolling loads
 * more, up to 10,000), one entry whole, the fields sidebar, live tail. The URL holds the whole search
 * (`#/explore?q=…&range=1h`, or `from`/`to`, and `live=1`): a link shares it, back returns to the
 * previous one.
 */

const PAGE_SIZE = 500;
const MAX_ROWS = 10_000;
const LIVE_EVERY_MS = 2000;

export function renderExplore(ctx: PageContext): View {
  const t = words();
  const { params } = ctx;
  const go = (changes: Record<string, string | null>) => ctx.navigate(changed(params, changes));
  const bar = queryBar(params, go);
  const addFilter = (field: string, value: string, exclude: boolean) => go({ q: withFilter(params.get('q') ?? '', field, value, exclude) });

  const status = el('p', { id: 'status', role: 'status' });
  const loaded = el('p', { id: 'loaded', className: 'muted' });
  const chart = histogramFigure(t.histogram);
  const detailSlot = el('div', { id: 'detail-slot' });
  let entries: LogEntry[] = [];
  let total = 0;
  let page = 1;
  let range = timeRange(params);
  let loading = false;
  let relation: string | undefined;

  const showCounts = (relation: string | undefined) => {
    // `gte`: the service stopped counting (trackTotal); there are at least this many.
    status.textContent = total ? `${count(total)}${relation === 'gte' ? '+' : ''} ${total === 1 ? t.totalOne : t.total}` : t.none;
    const capped = entries.length >= MAX_ROWS && (relation === 'gte' || total > MAX_ROWS);
    loaded.textContent = entries.length > 0 ? `${t.showing} ${count(entries.length)}${capped ? ` (${t.narrowToSeeMore})` : ''}` : '';
    loaded.dataset.count = String(entries.length);
  };

  const more = () => {
    if (loading || entries.length >= Math.min(total, MAX_ROWS)) return;
    loading = true;
    const body: SearchBody = { query: params.get('q') ?? '', timeRange: range, page: page + 1, limit: PAGE_SIZE };
    api<PageResponse>('/api/v1/logs/list/paginate', { method: 'POST', body: JSON.stringify(body) })
      .then((answer) => {
        page += 1;
        // A page past the end (new entries pushed old ones down) simply adds nothing.
        const known = new Set(entries.map((entry) => entry.id));
        entries = entries.concat(answer.data.filter((entry) => !known.has(entry.id))).slice(0, MAX_ROWS);
        if (answer.data.length < PAGE_SIZE) {
          // The last page: now the count is exact.
          total = entries.length;
          relation = 'eq';
        }
        showCounts(relation);
        results.show(entries);
      })
      .catch((error: unknown) => status.replaceChildren(problem(error)))
      .finally(() => (loading = false));
  };

  const results = resultsTable({
    headers: [t.colTime, t.colLevel, t.colService, t.colHost, t.colMessage],
    label: t.results,
    onOpen: (entry) => {
      const panel = entryDetail(entry, {
        canSeeTraces: ctx.can('dashboard:read'),
        onFilter: addFilter,
        onClose: () => detailSlot.replaceChildren(),
      });
      detailSlot.replaceChildren(panel);
      panel.focus();
    },
    onMore: more,
  });

  const load = async () => {
    range = timeRange(params);
    const body: HistogramBody = { query: params.get('q') ?? '', timeRange: range };
    loading = true;
    try {
      const [answer, buckets] = await Promise.all([
        api<PageResponse>('/api/v1/logs/list/paginate', {
          method: 'POST',
          body: JSON.stringify({ ...body, page: 1, limit: PAGE_SIZE } satisfies SearchBody),
        }),
        api<HistogramResponse>('/api/v1/logs/histogram', { method: 'POST', body: JSON.stringify(body) }),
      ]);
      bar.markError(null);
      page = 1;
      entries = answer.data;
      total = answer.total;
      relation = answer.totalRelation;
      showCounts(relation);
      chart.show(histogram(t.histogram, buckets.buckets, buckets.interval_ms, (from, to) => go({ from, to, range: null, live: null })));
      results.show(entries);
    } catch (error) {
      entries = [];
      results.show(entries);
      if (error instanceof ApiError && error.status === 400 && params.get('q')) {
        status.textContent = '';
        bar.markError(error.full, typeof error.body.position === 'number' ? error.body.position : undefined);
      } else status.replaceChildren(problem(error));
    } finally {
      loading = false;
    }
  };

  const node = el(
    'div',
    { className: 'explore' },
    el('h2', { className: 'visually-hidden', textContent: t.explore }),
    bar.node,
    ctx.can('alerts:write') && alertFromSearchLink(params),
    el(
      'div',
      { className: 'columns' },
      fieldsSidebar({ range: () => range, onFilter: addFilter }),
      el(
        'section',
        { className: 'found', ariaLabel: t.results },
        el('div', { className: 'counts' }, status, loaded),
        chart.node,
        patternsPanel({ query: () => params.get('q') ?? '', range: () => range, onFilter: (q) => go({ q }) }),
        results.node,
        detailSlot,
      ),
    ),
  );
  void load();
  // Live tail: a relative range moves with the clock; the newest entries are searched again, while
  // the reader is at the top of the list (scrolled down, they are reading: nothing moves).
  let timer: ReturnType<typeof setInterval> | undefined;
  if (params.get('live') === '1' && !params.get('from'))
    timer = setInterval(() => {
      if (!loading && results.atTop()) void load();
    }, LIVE_EVERY_MS);
  return { node, stop: () => clearInterval(timer) };
}
