import { api } from './api.js';
import type { DcResponse, OverviewResponse, PipelineResponse, ThroughputResponse } from './api-types.js';
import { barList, lineChart } from './charts.js';
import { el, facts, tabs, table } from './dom.js';
import { problem } from './feedback.js';
import { count, millis, percent, time } from './format.js';
import { words } from './i18n.js';
import { changed, every, type PageContext, type View } from './page.js';

/**
 * The four dashboards (docs/dashboards.md): overview, pipeline status, data-center status and
 * throughput, as charts and tables drawn again every `refresh` (5 s to 1 min, or off; in the URL
 * with the range).
 */

const RANGES: Record<string, number> = { '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000 };
const REFRESH: Record<string, number> = { '5s': 5000, '10s': 10_000, '30s': 30_000, '1m': 60_000, off: 0 };

export function renderDashboards(ctx: PageContext): View {
  const t = words();
  const view = ctx.params.get('view') ?? 'overview';
  const rangeKey = ctx.params.get('range') ?? '1h';
  const refreshKey = ctx.params.get('refresh') ?? '10s';
  const content = el('div', { id: 'dashboard-content', className: 'dashboard' });
  const updated = el('p', { id: 'updated', className: 'muted', role: 'status' });

  const select = (id: string, label: string, options: string[], value: string, key: string) => {
    const node = el('select', { id }, ...options.map((o) => el('option', { value: o, textContent: o === 'off' ? t.off : o })));
    node.value = value;
    node.addEventListener('change', () => ctx.navigate(changed(ctx.params, { [key]: node.value })));
    return [el('label', { htmlFor: id, textContent: label }), node];
  };

  const draw: Record<string, () => Promise<HTMLElement>> = {
    overview: () => overview(rangeKey),
    pipeline: pipeline,
    dc: () => dataCenters(rangeKey),
    throughput: () => throughput(rangeKey),
  };
  let ticks = 0;
  const tick = async () => {
    let failed = false;
    try {
      const next = await (draw[view] ?? draw.overview!)();
      content.replaceChildren(next);
    } catch (error) {
      failed = true;
      content.replaceChildren(problem(error));
    }
    ticks += 1;
    // The tick count lets a test (and a curious reader) see that the view refreshes; a failed
    // refresh says so, never "Updated" beside an error.
    updated.dataset.ticks = String(ticks);
    updated.dataset.failed = String(failed);
    updated.textContent = `${failed ? t.updateFailed : t.updatedAt} ${time(new Date().toISOString())}`;
  };
  const stop = REFRESH[refreshKey] ? every(REFRESH[refreshKey]!, tick) : (void tick(), () => undefined);

  const node = el(
    'div',
    { id: 'dashboards-page' },
    el('h2', { textContent: t.dashboards }),
    tabs(
      t.dashboards,
      'dashboards',
      [
        ['overview', t.overview],
        ['pipeline', t.pipeline],
        ['dc', t.dataCenters],
        ['throughput', t.throughput],
      ],
      view,
    ),
    el(
      'div',
      { className: 'toolbar' },
      ...(view === 'pipeline' ? [] : select('dash-range', t.range, Object.keys(RANGES), rangeKey, 'range')),
      ...select('dash-refresh', t.refreshEvery, Object.keys(REFRESH), refreshKey, 'refresh'),
      updated,
    ),
    content,
  );
  return { node, stop };
}

function rangeQuery(rangeKey: string): string {
  const now = Date.now();
  const span = RANGES[rangeKey] ?? RANGES['1h']!;
  return new URLSearchParams({ from: new Date(now - span).toISOString(), to: new Date(now).toISOString() }).toString();
}

const tile = (label: string, value: string, id: string) =>
  el('div', { className: 'tile', id }, el('span', { className: 'tile-label', textContent: label }), el('strong', { textContent: value }));

async function overview(rangeKey: string): Promise<HTMLElement> {
  const t = words();
  const o = await api<OverviewResponse>(`/api/v1/dashboard/overview?${rangeQuery(rangeKey)}`);
  return el(
    'div',
    { id: 'overview' },
    el(
      'div',
      { className: 'tiles' },
      tile(t.entries, count(o.volume.total), 'tile-volume'),
      tile(t.errorsLabel, count(o.errors.total), 'tile-errors'),
      tile(t.errorRate, percent(o.errors.rate), 'tile-error-rate'),
      tile(t.activeAlerts, o.alerts.available ? count(o.alerts.active_total) : '–', 'tile-alerts'),
    ),
    lineChart({
      id: 'volume-chart',
      title: t.volumeOverTime,
      format: count,
      legend: 'total',
      series: [
        { name: t.entries, points: o.volume.series.map((p) => ({ ts: p.ts, value: p.count })) },
        { name: t.errorsLabel, points: o.volume.series.map((p) => ({ ts: p.ts, value: p.errors })) },
      ],
    }),
    el(
      'div',
      { className: 'two' },
      barList({
        id: 'top-services',
        title: t.topServices,
        format: count,
        items: o.top_services.map((s) => ({
          label: s.service,
          value: s.count,
          note: `(${percent(s.error_rate)} ${t.errorsLabel.toLowerCase()})`,
        })),
      }),
      barList({
        id: 'alerts-by-severity',
        title: t.activeAlertsBySeverity,
        format: count,
        items: Object.entries(o.alerts.by_severity).map(([severity, n]) => ({ label: severity, value: n })),
      }),
    ),
    table(
      t.topErrors,
      [
        [t.colMessage, (e) => e.message],
        [t.colCount, (e) => count(e.count)],
        [t.colLastSeen, (e) => time(e.last_seen)],
        [t.colServices, (e) => e.services.join(', ')],
      ],
      o.top_errors,
      { id: 'top-errors' },
    ),
  );
}

async function pipeline(): Promise<HTMLElement> {
  const t = words();
  const p = await api<PipelineResponse>('/api/v1/dashboard/pipeline/status');
  return el(
    'div',
    { id: 'pipeline' },
    el(
      'div',
      { className: 'tiles' },
      el(
        'div',
        { className: 'tile', id: 'pipeline-status' },
        el('span', { className: 'tile-label', textContent: t.colStatus }),
        el('strong', { className: `badge status-${p.status}`, textContent: p.status }),
      ),
      tile(t.store, `${p.store.status} (${millis(p.store.latency_ms)})`, 'store-status'),
      tile(t.backlog, count(p.backlog), 'backlog'),
      tile(t.countingSince, time(p.since), 'since'),
    ),
    barList({
      id: 'source-rates',
      title: t.storedPerSecond,
      format: (v) => v.toFixed(2),
      items: p.sources.map((s) => ({ label: s.source, value: s.rates.stored_per_second_1m })),
    }),
    table(
      t.sources,
      [
        [t.colSource, (s) => s.source],
        [t.colStatus, (s) => el('span', { className: `badge status-${s.status}`, textContent: s.status })],
        [t.colReasons, (s) => s.reasons.join('; ')],
        [t.colReceived5m, (s) => count(s.last_5m.received)],
        [t.colStored5m, (s) => count(s.last_5m.stored)],
        [t.colRejected5m, (s) => count(s.last_5m.rejected)],
        [t.colLatency, (s) => millis(s.last_5m.avg_ingest_latency_ms)],
        [t.colTotal, (s) => count(s.totals.accepted)],
        [t.colLastIngest, (s) => time(s.last_ingest_at)],
      ],
      p.sources,
      { id: 'sources-table' },
    ),
  );
}

async function dataCenters(rangeKey: string): Promise<HTMLElement> {
  const t = words();
  const d = await api<DcResponse>(`/api/v1/dashboard/dc/status?${rangeQuery(rangeKey)}`);
  return el(
    'div',
    { id: 'dc' },
    barList({ id: 'site-volume', title: t.volumeBySite, format: count, items: d.sites.map((s) => ({ label: s.name, value: s.volume })) }),
    ...d.sites.map((site) =>
      el(
        'section',
        { className: 'site', ariaLabel: site.name },
        el('h3', {}, `${site.name} `, el('span', { className: `badge status-${site.status}`, textContent: site.status })),
        facts([
          [t.local, site.local ? t.yes : t.no],
          [t.store, site.store.status],
          [t.entries, count(site.volume)],
          [t.colLastSeen, time(site.last_seen)],
          [t.colReasons, site.reasons.join('; ') || '–'],
        ]),
        site.services.length
          ? table(
              t.colServices,
              [
                [t.colService, (s) => s.service],
                [t.colCount, (s) => count(s.count)],
                [t.colStatus, (s) => s.status],
                [t.colLastSeen, (s) => time(s.last_seen)],
              ],
              site.services,
            )
          : null,
      ),
    ),
    d.unassigned.length
      ? table(
          t.unassigned,
          [
            ['dc', (u) => u.dc],
            [t.entries, (u) => count(u.volume)],
            [t.colLastSeen, (u) => time(u.last_seen)],
          ],
          d.unassigned,
        )
      : null,
  );
}

async function throughput(rangeKey: string): Promise<HTMLElement> {
  const t = words();
  const d = await api<ThroughputResponse>(`/api/v1/dashboard/throughput?${rangeQuery(rangeKey)}`);
  const eps = (v: number) => `${v.toFixed(2)}/s`;
  return el(
    'div',
    { id: 'throughput' },
    lineChart({
      id: 'sources-chart',
      title: `${t.bySource} (${t.eventsPerSecond}, ${d.interval})`,
      format: eps,
      series: d.sources.map((s) => ({ name: s.source, points: s.series.map((p) => ({ ts: p.ts, value: p.eps })) })),
    }),
    lineChart({
      id: 'services-chart',
      title: `${t.byService} (${t.eventsPerSecond}, ${d.interval})`,
      format: eps,
      series: d.services.slice(0, 6).map((s) => ({ name: s.service, points: s.series.map((p) => ({ ts: p.ts, value: p.eps })) })),
    }),
    table(
      t.totals,
      [
        [t.colSource, (s) => s.source],
        [t.colTotal, (s) => count(s.total)],
      ],
      d.sources,
      { id: 'throughput-sources' },
    ),
  );
}
