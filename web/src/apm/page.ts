import { api } from '../api.js';
import type { ServiceMapResponse, TraceResponse, TracesResponse } from '../api-types.js';
import { el, facts, tabs, table } from '../dom.js';
import { into } from '../feedback.js';
import { count, millis, percent, time } from '../format.js';
import { words } from '../i18n.js';
import { changed, type PageContext, type View } from '../page.js';
import { pager } from '../pager.js';
import { rangeSelect } from '../range-select.js';
import { serviceGraph, serviceMapFigure } from './service-graph.js';
import { waterfall } from './waterfall.js';

/**
 * APM (docs/apm.md): the service map as a graph, the trace list with its filters, and one trace as a
 * waterfall (`#/apm?trace=<id>`, where an entry's trace link leads).
 */

export function renderApm(ctx: PageContext): View {
  const t = words();
  const trace = ctx.params.get('trace');
  const view = trace ? 'trace' : (ctx.params.get('view') ?? 'map');
  const content = el('div', { id: 'apm-content' });
  const node = el(
    'div',
    { id: 'apm-page' },
    el('h2', { textContent: t.apm }),
    tabs(
      t.apm,
      'apm',
      [
        ['map', t.serviceMap],
        ['traces', t.traces],
      ],
      view,
    ),
    content,
  );
  void into(content, () => (trace ? traceView(trace) : view === 'traces' ? tracesView(ctx) : mapView(ctx)));
  return { node };
}

async function mapView(ctx: PageContext): Promise<HTMLElement> {
  const t = words();
  const { control, from, to } = rangeSelect(ctx, 'apm-range');
  const map = await api<ServiceMapResponse>(`/api/v1/apm/service-map?${new URLSearchParams({ from, to }).toString()}`);
  const tracesOf = (service: string) =>
    `#/apm?${new URLSearchParams({ view: 'traces', service, range: ctx.params.get('range') ?? '1h' }).toString()}`;
  return el(
    'div',
    { id: 'service-map' },
    el('div', { className: 'toolbar' }, control),
    map.truncated ? el('p', { className: 'warning', textContent: t.mapTruncated }) : null,
    map.nodes.length
      ? serviceMapFigure(t.serviceMap, serviceGraph(t.serviceMap, map.nodes, map.edges, tracesOf))
      : el('p', { textContent: t.noTraces }),
    table(
      t.services,
      [
        [t.colService, (n) => el('a', { href: tracesOf(n.name), textContent: n.name })],
        [t.colRequests, (n) => count(n.requests)],
        [t.errorRate, (n) => percent(n.errorRate)],
        ['p95', (n) => millis(n.p95Ms)],
        [t.instrumented, (n) => (n.instrumented ? t.yes : t.no)],
      ],
      map.nodes,
      { id: 'map-nodes' },
    ),
    table(
      t.calls,
      [
        [t.caller, (e) => e.source],
        [t.callee, (e) => e.target],
        [t.colRequests, (e) => count(e.requests)],
        [t.errorRate, (e) => percent(e.errorRate)],
        ['p95', (e) => millis(e.p95Ms)],
      ],
      map.edges,
      { id: 'map-edges' },
    ),
  );
}

async function tracesView(ctx: PageContext): Promise<HTMLElement> {
  const t = words();
  const { control, from, to } = rangeSelect(ctx, 'apm-range');
  const page = Math.max(1, Number(ctx.params.get('page') ?? '1') || 1);
  const filters: Record<string, string> = {};
  for (const key of ['service', 'operation', 'minDurationMs', 'errorsOnly']) {
    const value = ctx.params.get(key);
    if (value) filters[key] = value;
  }
  const list = await api<TracesResponse>(
    `/api/v1/apm/traces?${new URLSearchParams({ from, to, ...filters, page: String(page), limit: '50' }).toString()}`,
  );

  const input = (id: string, label: string, key: string, type = 'text') => {
    const node = el('input', { id, name: key, type, value: ctx.params.get(key) ?? '', autocomplete: 'off' });
    return [el('label', { htmlFor: id, textContent: label }), node] as const;
  };
  const [serviceLabel, service] = input('trace-service', t.colService, 'service');
  const [operationLabel, operation] = input('trace-operation', t.operation, 'operation');
  const [durationLabel, duration] = input('trace-min', t.minDuration, 'minDurationMs', 'number');
  const errorsOnly = el('input', { id: 'trace-errors', type: 'checkbox', checked: ctx.params.get('errorsOnly') === 'true' });
  const form = el(
    'form',
    { className: 'toolbar', role: 'search' },
    control,
    serviceLabel,
    service,
    operationLabel,
    operation,
    durationLabel,
    duration,
    el('label', { className: 'check' }, errorsOnly, ` ${t.errorsOnly}`),
    el('button', { type: 'submit', textContent: t.search }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    ctx.navigate(
      changed(ctx.params, {
        service: service.value,
        operation: operation.value,
        minDurationMs: duration.value,
        errorsOnly: errorsOnly.checked ? 'true' : null,
        page: null,
      }),
    );
  });
  return el(
    'div',
    { id: 'traces' },
    form,
    el('p', { role: 'status', textContent: `${count(list.total)} ${t.traces.toLowerCase()}` }),
    table(
      t.traces,
      [
        [t.colStarted, (r) => el('a', { href: `#/apm?trace=${r.traceId}`, className: 'trace-link', textContent: time(r.startTime) })],
        [t.colRoot, (r) => (r.root ? `${r.root.service}: ${r.root.name}` : '–')],
        [t.colDuration, (r) => millis(r.durationMs)],
        [t.spans, (r) => count(r.spanCount)],
        [t.errorsLabel, (r) => (r.errorCount ? el('span', { className: 'badge status-down', textContent: String(r.errorCount) }) : '0')],
        [t.colServices, (r) => r.services.map((s) => s.service).join(', ')],
      ],
      list.data,
      { id: 'traces-table' },
    ),
    pager(ctx, page, list.pages),
  );
}

async function traceView(traceId: string): Promise<HTMLElement> {
  const t = words();
  const trace = await api<TraceResponse>(`/api/v1/apm/traces/${encodeURIComponent(traceId)}`);
  const logsOfTrace = `#/explore?${new URLSearchParams({
    q: `trace_id:${trace.traceId}`,
    from: new Date(Date.parse(trace.startTime) - 60_000).toISOString(),
    to: new Date(Date.parse(trace.startTime) + trace.durationMs + 60_000).toISOString(),
  }).toString()}`;
  return el(
    'div',
    { id: 'trace' },
    el('h3', { textContent: `${t.trace} ${trace.traceId}` }),
    facts([
      [t.colStarted, time(trace.startTime)],
      [t.colDuration, millis(trace.durationMs)],
      [t.colServices, trace.services.join(', ')],
      [t.logs, el('a', { href: logsOfTrace, id: 'trace-logs', textContent: t.logsOfTrace })],
    ]),
    waterfall(trace.spans),
  );
}
