import { api, ApiError } from './api.js';
import { el, svg } from './dom.js';
import { words } from './i18n.js';

/**
 * The explore page: the query, a time range (relative or absolute), the histogram (drag across it to
 * zoom), the entries page by page (a click shows one whole), the fields with their top values (a click
 * adds a filter), and live tail. Everything it shows is in the URL (`#/explore?q=…&range=1h&page=2`):
 * a link shares it, the back button returns to the previous search.
 */

interface Entry {
  id: string;
  '@timestamp': string;
  message: string;
  level?: string;
  service?: string;
  host?: string;
  trace_id?: string;
  attributes: Record<string, unknown>;
}

export const RANGES: Record<string, number> = { '15m': 900_000, '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000, '7d': 604_800_000 };
const PAGE_SIZE = 50;
const LIVE_EVERY_MS = 2000;

/** The absolute time range of the page's parameters. */
export function timeRange(params: URLSearchParams, now = Date.now()): { from: string; to: string } {
  const from = params.get('from');
  const to = params.get('to');
  if (from && to) return { from, to };
  const span = RANGES[params.get('range') ?? '1h'] ?? RANGES['1h']!;
  return { from: new Date(now - span).toISOString(), to: new Date(now).toISOString() };
}

/** `field:"value"` in the query language, quotes and backslashes escaped. */
export function fieldFilter(field: string, value: string): string {
  return `${field}:"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

export function renderExplore(
  params: URLSearchParams,
  navigate: (params: URLSearchParams) => void,
): { node: HTMLElement; stop: () => void } {
  const t = words();
  const go = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [key, value] of Object.entries(changes)) {
      if (value === null || value === '') next.delete(key);
      else next.set(key, value);
    }
    navigate(next);
  };

  const query = el('input', { id: 'query', type: 'search', value: params.get('q') ?? '', autocomplete: 'off' });
  const rangeSelect = el(
    'select',
    { id: 'range' },
    ...Object.keys(RANGES).map((key) => el('option', { value: key, textContent: key })),
    el('option', { value: 'custom', textContent: t.custom }),
  );
  rangeSelect.value = params.get('from') ? 'custom' : (params.get('range') ?? '1h');
  const { from, to } = timeRange(params);
  const local = (iso: string) => iso.slice(0, 19);
  const fromInput = el('input', { id: 'from', type: 'datetime-local', step: 1, value: local(from) });
  const toInput = el('input', { id: 'to', type: 'datetime-local', step: 1, value: local(to) });
  const custom = el(
    'span',
    { className: 'custom', hidden: rangeSelect.value !== 'custom' },
    el('label', { htmlFor: 'from', textContent: t.from }),
    fromInput,
    el('label', { htmlFor: 'to', textContent: t.to }),
    toInput,
  );
  const live = el('input', { id: 'live', type: 'checkbox', checked: params.get('live') === '1', disabled: rangeSelect.value === 'custom' });

  const form = el(
    'form',
    { className: 'query', role: 'search' },
    el('label', { htmlFor: 'query', textContent: t.query }),
    query,
    el('label', { htmlFor: 'range', textContent: t.range }),
    rangeSelect,
    custom,
    el('button', { type: 'submit', textContent: t.search }),
    el('label', { className: 'live' }, live, ` ${t.live}`),
  );
  const submit = () => {
    if (rangeSelect.value === 'custom') {
      const iso = (value: string) => new Date(`${value}Z`).toISOString();
      go({ q: query.value, range: null, from: iso(fromInput.value), to: iso(toInput.value), page: null, live: null });
    } else go({ q: query.value, range: rangeSelect.value, from: null, to: null, page: null });
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });
  rangeSelect.addEventListener('change', () => {
    custom.hidden = rangeSelect.value !== 'custom';
    if (rangeSelect.value !== 'custom') submit();
  });
  live.addEventListener('change', () => go({ live: live.checked ? '1' : null }));

  const status = el('p', { id: 'status', role: 'status' });
  const chart = el('figure', { id: 'histogram' }, el('figcaption', { textContent: t.histogram }));
  const rows = el('tbody');
  const pager = el('nav', { className: 'pager', ariaLabel: t.page });
  const fields = el('ul', { id: 'fields' });
  const columns = ['@timestamp', 'level', 'service', 'host', 'message'] as const;
  const results = el(
    'table',
    { id: 'results' },
    el('thead', {}, el('tr', {}, ...columns.map((name) => el('th', { scope: 'col', textContent: name })))),
    rows,
  );
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);

  const showEntries = (data: Entry[], total: number, relation: string, pages: number) => {
    // `gte`: the service stopped counting (trackTotal); there are at least this many.
    status.textContent = total ? `${total}${relation === 'gte' ? '+' : ''} ${t.total}` : t.none;
    rows.replaceChildren(
      ...data.flatMap((entry) => {
        const detail = el(
          'tr',
          { className: 'detail', hidden: true },
          el('td', { colSpan: columns.length }, el('pre', { textContent: JSON.stringify(entry, null, 2) })),
        );
        // The time opens the entry: a button, so keyboards and screen readers reach it too.
        const expand = el('button', { type: 'button', className: 'expand', textContent: entry['@timestamp'], ariaExpanded: 'false' });
        const row = el(
          'tr',
          { className: 'entry' },
          el('td', {}, expand),
          ...columns.slice(1).map((name) => el('td', { textContent: String(entry[name] ?? '') })),
        );
        const toggle = () => {
          detail.hidden = !detail.hidden;
          expand.ariaExpanded = String(!detail.hidden);
        };
        row.addEventListener('click', toggle);
        return [row, detail];
      }),
    );
    const previous = el('button', { type: 'button', id: 'previous', textContent: t.previous, disabled: page <= 1 });
    const next = el('button', { type: 'button', id: 'next', textContent: t.next, disabled: page >= pages });
    previous.addEventListener('click', () => go({ page: String(page - 1) }));
    next.addEventListener('click', () => go({ page: String(page + 1) }));
    pager.replaceChildren(
      previous,
      el('span', { id: 'page-number', textContent: `${t.page} ${page} ${t.of} ${Math.max(1, pages)}` }),
      next,
    );
  };

  const showHistogram = (buckets: { ts: string; count: number }[], intervalMs: number) => {
    const max = Math.max(1, ...buckets.map((bucket) => bucket.count));
    const width = Math.max(1, buckets.length) * 10;
    const chartSvg = svg('svg', { viewBox: `0 0 ${width} 100`, preserveAspectRatio: 'none', role: 'img', 'aria-label': t.histogram });
    buckets.forEach((bucket, index) => {
      const height = (bucket.count / max) * 100;
      const bar = svg('rect', {
        x: index * 10 + 1,
        y: 100 - height,
        width: 8,
        height,
        class: 'bar',
        'data-ts': bucket.ts,
        'data-count': bucket.count,
      });
      const title = svg('title');
      title.textContent = `${bucket.ts}: ${bucket.count}`;
      bar.append(title);
      chartSvg.append(bar);
    });
    const selection = svg('rect', { y: 0, height: 100, class: 'selection', width: 0 });
    chartSvg.append(selection);
    // Drag across the bars: the buckets under the selection become the new absolute range.
    let start: number | undefined;
    const position = (event: PointerEvent) => {
      const box = chartSvg.getBoundingClientRect();
      return Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
    };
    chartSvg.addEventListener('pointerdown', (event) => {
      start = position(event);
      chartSvg.setPointerCapture(event.pointerId);
    });
    chartSvg.addEventListener('pointermove', (event) => {
      if (start === undefined) return;
      const [a, b] = [start, position(event)].sort((x, y) => x - y) as [number, number];
      selection.setAttribute('x', String(a * width));
      selection.setAttribute('width', String((b - a) * width));
    });
    chartSvg.addEventListener('pointerup', (event) => {
      if (start === undefined || buckets.length === 0) return;
      const [a, b] = [start, position(event)].sort((x, y) => x - y) as [number, number];
      start = undefined;
      if (b - a < 0.01) return;
      const first = Math.min(buckets.length - 1, Math.floor(a * buckets.length));
      const last = Math.min(buckets.length - 1, Math.floor(b * buckets.length));
      const zoomFrom = Date.parse(buckets[first]!.ts);
      const zoomTo = Date.parse(buckets[last]!.ts) + intervalMs;
      go({ from: new Date(zoomFrom).toISOString(), to: new Date(zoomTo).toISOString(), range: null, page: null, live: null });
    });
    chart.replaceChildren(el('figcaption', { textContent: t.histogram }), chartSvg);
  };

  const showFields = (names: { name: string }[]) => {
    fields.replaceChildren(
      ...names
        .filter((field) => field.name !== '@timestamp' && field.name !== 'message')
        .map((field) => {
          const values = el('ul', { className: 'values' });
          const button = el('button', { type: 'button', className: 'field', textContent: field.name, ariaExpanded: 'false' });
          button.addEventListener('click', () => {
            if (button.ariaExpanded === 'true') {
              button.ariaExpanded = 'false';
              values.replaceChildren();
              return;
            }
            button.ariaExpanded = 'true';
            const range = timeRange(params);
            void api<{ values: { value: string; count: number }[] }>(
              `/api/v1/logs/fields/${encodeURIComponent(field.name)}/distinct?${new URLSearchParams({ limit: '10', ...range }).toString()}`,
            ).then(({ values: top }) =>
              values.replaceChildren(
                ...top.map(({ value, count }) => {
                  const add = el('button', { type: 'button', className: 'value', textContent: `${value} (${count})` });
                  add.addEventListener('click', () =>
                    go({ q: [query.value.trim(), fieldFilter(field.name, value)].filter(Boolean).join(' '), page: null }),
                  );
                  return el('li', {}, add);
                }),
              ),
            );
          });
          return el('li', {}, button, values);
        }),
    );
  };

  const load = async () => {
    const range = timeRange(params);
    const body = { query: params.get('q') ?? '', timeRange: range };
    try {
      const [answer, histogram] = await Promise.all([
        api<{ data: Entry[]; total: number; totalRelation: string; pages: number }>('/api/v1/logs/list/paginate', {
          method: 'POST',
          body: JSON.stringify({ ...body, page, limit: PAGE_SIZE }),
        }),
        api<{ buckets: { ts: string; count: number }[]; interval_ms: number }>('/api/v1/logs/histogram', {
          method: 'POST',
          body: JSON.stringify(body),
        }),
      ]);
      showEntries(answer.data, answer.total, answer.totalRelation, answer.pages);
      showHistogram(histogram.buckets, histogram.interval_ms);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        window.dispatchEvent(new Event('gerbang:signed-out'));
        return;
      }
      const position = error instanceof ApiError && typeof error.body.position === 'number' ? ` (@${error.body.position})` : '';
      status.textContent = (error instanceof Error ? error.message : String(error)) + position;
      rows.replaceChildren();
    }
  };

  void api<{ fields: { name: string }[] }>('/api/v1/logs/fields').then(
    ({ fields: names }) => showFields(names),
    () => undefined,
  );
  const node = el(
    'div',
    { className: 'explore' },
    form,
    el(
      'div',
      { className: 'columns' },
      el('aside', { ariaLabel: t.fields }, el('h2', { textContent: t.fields }), fields),
      el('section', {}, status, chart, results, pager),
    ),
  );
  void load();
  // Live tail: the relative range moves with the clock; the first page is searched again and again.
  let timer: ReturnType<typeof setInterval> | undefined;
  if (params.get('live') === '1' && !params.get('from')) timer = setInterval(() => void load(), LIVE_EVERY_MS);
  return { node, stop: () => clearInterval(timer) };
}
