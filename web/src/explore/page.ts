import { alertFromSearchLink } from '../alerts/from-search.js';
import { api, ApiError, download } from '../api.js';
import type { ExportBody, HistogramBody, HistogramResponse, LogEntry, PageResponse, SearchBody } from '../api-types.js';
import { button, el } from '../dom.js';
import { problem } from '../feedback.js';
import { bytes, count } from '../format.js';
import { words } from '../i18n.js';
import { changed, type PageContext, type View } from '../page.js';
import { entryDetail } from './detail.js';
import { fieldsSidebar } from './fields.js';
import { histogram, histogramAxis, histogramFigure } from './histogram.js';
import { queryBar } from './query-bar.js';
import { resultsTable } from './results.js';
import { patternsPanel } from './patterns.js';
import { savedSearches } from './saved.js';
import { colsParam, columnsOf, queryTerms, sortOf, timeRange, withFilter, withPhrase } from './search.js';

/**
 * The explore page: query bar, saved searches, histogram (drag to zoom), the entries newest or oldest
 * first in the chosen columns (scrolling loads more by searchAfter, as far as the range goes), one
 * entry whole in a side panel, the fields sidebar, export, live tail. The URL holds the whole search
 * (search.ts): a link shares it, back returns to the previous one.
 */

const PAGE_SIZE = 500;
const LIVE_EVERY_MS = 2000;

export function renderExplore(ctx: PageContext): View {
  const t = words();
  const { params } = ctx;
  const go = (changes: Record<string, string | null>) => ctx.navigate(changed(params, changes));
  const bar = queryBar(params, go);
  const addFilter = (field: string, value: string, exclude: boolean) => go({ q: withFilter(params.get('q') ?? '', field, value, exclude) });
  const addPhrase = (phrase: string, exclude: boolean) => go({ q: withPhrase(params.get('q') ?? '', phrase, exclude) });
  const columns = columnsOf(params);
  const order = sortOf(params);
  const setColumns = (next: string[]) => go({ cols: colsParam(next) });
  const addColumn = (field: string) => {
    if (!columns.includes(field)) setColumns([...columns, field]);
  };
  const header = (column: string) =>
    ({ '@timestamp': t.colTime, level: t.colLevel, service: t.colService, host: t.colHost, message: t.colMessage })[column] ?? column;

  const status = el('p', { id: 'status', role: 'status' });
  const loaded = el('p', { id: 'loaded', className: 'muted' });
  const chart = histogramFigure(t.histogram);
  const detailSlot = el('div', { id: 'detail-slot' });
  let entries: LogEntry[] = [];
  let total = 0;
  let range = timeRange(params);
  let loading = false;
  let relation: string | undefined;

  const showCounts = (relation: string | undefined) => {
    // `gte`: the service stopped counting (trackTotal); there are at least this many.
    status.textContent = total ? `${count(total)}${relation === 'gte' ? '+' : ''} ${total === 1 ? t.totalOne : t.total}` : t.none;
    loaded.textContent = entries.length > 0 ? `${t.showing} ${count(entries.length)}` : '';
    loaded.dataset.count = String(entries.length);
  };

  // The last page said there is no more (fewer rows than asked for).
  let exhausted = false;
  const more = () => {
    const last = entries.at(-1);
    if (loading || exhausted || !last || (relation === 'eq' && entries.length >= total)) return;
    loading = true;
    // Keyset paging: the entries after the last one shown, in the page's order, however deep.
    const body: SearchBody = {
      query: params.get('q') ?? '',
      timeRange: range,
      sort: { field: '@timestamp', order },
      searchAfter: { '@timestamp': last['@timestamp'], id: last.id },
      limit: PAGE_SIZE,
      trackTotal: 1,
    };
    api<PageResponse>('/api/v1/logs/list/paginate', { method: 'POST', body: JSON.stringify(body) })
      .then((answer) => {
        const known = new Set(entries.map((entry) => entry.id));
        entries = entries.concat(answer.data.filter((entry) => !known.has(entry.id)));
        if (answer.data.length < PAGE_SIZE) {
          exhausted = true;
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
    columns,
    header,
    order,
    terms: queryTerms(params.get('q') ?? ''),
    label: t.results,
    onOpen: (entry, row) => {
      const panel = entryDetail(entry, {
        canSeeTraces: ctx.can('dashboard:read'),
        onFilter: addFilter,
        onPhrase: addPhrase,
        onColumn: addColumn,
        onClose: () => {
          detailSlot.replaceChildren();
          // Back to the row the panel came from.
          results.node.querySelector<HTMLButtonElement>(`tr[data-index="${row}"] button.expand`)?.focus();
        },
      });
      detailSlot.replaceChildren(panel);
      panel.focus();
    },
    onMore: more,
    onSort: (next) => go({ sort: next === 'asc' ? 'asc' : null }),
    onColumns: setColumns,
  });

  const exportMessage = el('span', { id: 'export-message', role: 'status' });
  const exportAs = (format: ExportBody['format']) => {
    const body: ExportBody = { query: params.get('q') ?? '', timeRange: range, format, order, columns: ['@timestamp', ...columns] };
    // Under way (with the bytes received, as they stream in), then what was saved: its name, size and columns.
    exportMessage.textContent = t.exporting;
    let shown = 0;
    download('/api/v1/logs/export', `logs.${format}`, { method: 'POST', body: JSON.stringify(body) }, (received) => {
      // The first bytes at once, then at most every 256 KiB: a redraw per network chunk would cost more than it tells.
      if (shown > 0 && received - shown < 262_144) return;
      shown = received;
      exportMessage.textContent = `${t.exporting} ${bytes(received)}`;
    }).then(
      (saved) => (exportMessage.textContent = `${t.exported} ${saved.filename} (${bytes(saved.bytes)}): ${body.columns!.join(', ')}`),
      (error: unknown) => exportMessage.replaceChildren(problem(error)),
    );
  };
  const exports = el(
    'span',
    { className: 'exports' },
    button(t.exportCsv, () => exportAs('csv'), { id: 'export-csv' }),
    button(t.exportNdjson, () => exportAs('ndjson'), { id: 'export-ndjson' }),
    exportMessage,
  );

  const load = async () => {
    range = timeRange(params);
    const body: HistogramBody = { query: params.get('q') ?? '', timeRange: range };
    loading = true;
    try {
      const [answer, buckets] = await Promise.all([
        api<PageResponse>('/api/v1/logs/list/paginate', {
          method: 'POST',
          body: JSON.stringify({ ...body, sort: { field: '@timestamp', order }, page: 1, limit: PAGE_SIZE } satisfies SearchBody),
        }),
        api<HistogramResponse>('/api/v1/logs/histogram', { method: 'POST', body: JSON.stringify({ ...body, groupBy: 'level' }) }),
      ]);
      bar.markError(null);
      exhausted = answer.data.length < PAGE_SIZE;
      entries = answer.data;
      total = answer.total;
      relation = answer.totalRelation;
      showCounts(relation);
      chart.show(
        histogram(t.histogram, buckets.buckets, buckets.interval_ms, (from, to) => go({ from, to, range: null, live: null })),
        ...histogramAxis(buckets.buckets, buckets.interval_ms, { max: t.histogramMax }),
      );
      results.show(entries);
    } catch (error) {
      entries = [];
      results.show(entries);
      if (error instanceof ApiError && error.status === 400 && params.get('q')) {
        status.textContent = '';
        // In plain words: the parser's sentence, without the API's envelope ("invalid json body: query: …").
        const detail = typeof error.body.detail === 'string' ? error.body.detail : error.full;
        const plain = `${t.queryProblem} ${detail.replace(/^query: /, '').replace(/ at position \d+$/, '')}`;
        bar.markError(plain, typeof error.body.position === 'number' ? error.body.position : undefined);
      } else status.replaceChildren(problem(error, () => void load()));
    } finally {
      loading = false;
    }
  };

  const node = el(
    'div',
    { className: 'explore' },
    el('h2', { className: 'visually-hidden', textContent: t.explore }),
    bar.node,
    savedSearches(params, ctx.navigate),
    ctx.can('alerts:write') && alertFromSearchLink(params),
    el(
      'div',
      { className: 'columns' },
      fieldsSidebar({
        search: () => ({ query: params.get('q') ?? '', timeRange: range }),
        onFilter: addFilter,
        onColumn: addColumn,
        columns,
      }),
      el(
        'section',
        { className: 'found', ariaLabel: t.results },
        el('div', { className: 'counts' }, status, loaded, exports),
        chart.node,
        patternsPanel(
          () => ({ query: params.get('q') ?? '', timeRange: range }),
          (query) => go({ q: [params.get('q') ?? '', query].filter(Boolean).join(' ') }),
        ),
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
