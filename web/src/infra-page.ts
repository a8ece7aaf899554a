import { api, ApiError } from './api.js';
import type { ClusterHealthResponse, ClusterProblem, ContainersResponse, HostsResponse, NodesResponse, PodsResponse } from './api-types.js';
import { lineChart } from './charts.js';
import { el, facts, tabs, table } from './dom.js';
import { into, problem } from './feedback.js';
import { bytes, count, percent, time } from './format.js';
import { words } from './i18n.js';
import type { PageContext, View } from './page.js';
import { rangeSelect } from './range-select.js';

/**
 * Infrastructure (docs/infra.md, docs/kubernetes.md): hosts and containers over time as charts, and
 * the Kubernetes views. A service without a cluster answers 503 "kubernetes not configured", which
 * is shown as that: a setting, not a failure.
 */

/** Containers drawn as charts; the rest are in the table. */
const CHARTED_CONTAINERS = 12;

export function renderInfra(ctx: PageContext): View {
  const t = words();
  const view = ctx.params.get('view') ?? 'hosts';
  const content = el('div', { id: 'infra-content' });
  const node = el(
    'div',
    { id: 'infra-page' },
    el('h2', { textContent: t.infrastructure }),
    tabs(
      t.infrastructure,
      'infra',
      [
        ['hosts', t.hosts],
        ['containers', t.containers],
        ['k8s', t.kubernetes],
      ],
      view,
    ),
    content,
  );
  void into(content, () => (view === 'k8s' ? kubernetes() : view === 'containers' ? containers(ctx) : hosts(ctx)));
  return { node };
}

/** The range select in a toolbar, and the range as a query string. */
function range(ctx: PageContext): [HTMLElement, string] {
  const { control, from, to } = rangeSelect(ctx, 'infra-range');
  return [el('div', { className: 'toolbar' }, control), new URLSearchParams({ from, to }).toString()];
}

/** One metric of a series answer's points, as a chart's line. */
const series = <K extends string>(rows: ({ ts: string } & Record<K, number | null>)[], field: K) =>
  rows.map((row) => ({ ts: row.ts, value: row[field] }));
const rate = (value: number) => `${bytes(value)}/s`;
/** A node's use of its allocatable CPU or memory, already in percent (none without metrics-server or an allocatable figure). */
const ofAllocatable = (value: number | null | undefined) => (value === null || value === undefined ? '–' : `${value}%`);

async function hosts(ctx: PageContext): Promise<HTMLElement> {
  const t = words();
  const [control, query] = range(ctx);
  const answer = await api<HostsResponse>(`/api/v1/infra/metrics?${query}`);
  return el(
    'div',
    { id: 'hosts' },
    control,
    answer.hosts.length === 0 ? el('p', { textContent: t.noHosts }) : null,
    ...answer.hosts.map((host) =>
      el(
        'section',
        { className: 'host', ariaLabel: host.host },
        el('h3', { textContent: host.host }),
        facts([
          [t.colLastSeen, time(host.lastSeen)],
          ['CPU', percent(host.latest.cpuUtilization)],
          [t.memory, `${bytes(host.latest.memoryUsedBytes)} (${percent(host.latest.memoryUtilization)})`],
          [t.disk, `${bytes(host.latest.diskUsedBytes)} (${percent(host.latest.diskUtilization)})`],
          ['load 1m', host.latest.load1m === null || host.latest.load1m === undefined ? '–' : host.latest.load1m.toFixed(2)],
        ]),
        el(
          'div',
          { className: 'charts' },
          lineChart({
            title: `CPU (${answer.interval})`,
            format: (v) => percent(v, 0),
            series: [{ name: 'CPU', points: series(host.series, 'cpuUtilization') }],
          }),
          lineChart({
            title: t.memory,
            format: (v) => percent(v, 0),
            series: [{ name: t.memory, points: series(host.series, 'memoryUtilization') }],
          }),
          lineChart({
            title: t.network,
            format: rate,
            series: [
              { name: t.received, points: series(host.series, 'networkReceiveBytesPerSec') },
              { name: t.sent, points: series(host.series, 'networkTransmitBytesPerSec') },
            ],
          }),
          lineChart({
            title: t.diskIo,
            format: rate,
            series: [
              { name: t.read, points: series(host.series, 'diskReadBytesPerSec') },
              { name: t.written, points: series(host.series, 'diskWriteBytesPerSec') },
            ],
          }),
        ),
      ),
    ),
  );
}

async function containers(ctx: PageContext): Promise<HTMLElement> {
  const t = words();
  const [control, query] = range(ctx);
  const answer = await api<ContainersResponse>(`/api/v1/infra/containers?${query}`);
  const list = answer.containers;
  return el(
    'div',
    { id: 'containers' },
    control,
    table(
      t.containers,
      [
        [t.kind, (c) => c.kind],
        ['id', (c) => c.id],
        [t.pod, (c) => (c.namespace && c.pod ? `${c.namespace}/${c.pod}` : (c.pod ?? '–'))],
        [t.colHost, (c) => c.host ?? '–'],
        ['CPU', (c) => (typeof c.latest.cpuCores === 'number' ? `${c.latest.cpuCores.toFixed(3)} ${t.cores}` : '–')],
        [t.memory, (c) => bytes(c.latest.memoryUsageBytes)],
        [t.colLastSeen, (c) => time(c.lastSeen)],
      ],
      list,
      { id: 'containers-table' },
    ),
    list.length === 0 ? el('p', { textContent: t.noContainers }) : null,
    el(
      'div',
      { className: 'charts' },
      ...list.slice(0, CHARTED_CONTAINERS).flatMap((c) => [
        lineChart({
          title: `${c.id}: CPU (${t.cores})`,
          format: (v) => v.toFixed(3),
          series: [{ name: 'CPU', points: series(c.series, 'cpuCores') }],
        }),
        lineChart({
          title: `${c.id}: ${t.memory}`,
          format: bytes,
          series: [{ name: t.memory, points: series(c.series, 'memoryUsageBytes') }],
        }),
      ]),
    ),
  );
}

async function kubernetes(): Promise<HTMLElement> {
  const t = words();
  const node = el('div', { id: 'k8s' });
  try {
    const health = await api<ClusterHealthResponse>('/api/v1/k8s/cluster/health');
    node.append(
      el('h3', {}, `${t.clusterHealth} `, el('span', { className: `badge status-${health.status}`, textContent: health.status })),
      facts([
        ['API server', health.apiServer.version ?? '–'],
        [t.nodes, `${health.nodes.ready}/${health.nodes.total} ready`],
        [
          t.pods,
          Object.entries(health.pods)
            .map(([k, v]) => `${k} ${count(v)}`)
            .join(', '),
        ],
      ]),
      table(
        t.problems,
        [
          [t.colSeverity, (p: ClusterProblem) => p.severity],
          [t.kind, (p) => p.kind],
          [t.colName, (p) => (p.namespace ? `${p.namespace}/${p.name}` : p.name)],
          [t.colReasons, (p) => p.reason],
          [t.colMessage, (p) => p.message],
        ],
        health.problems,
      ),
    );
  } catch (error) {
    if (error instanceof ApiError && error.status === 503) {
      node.append(
        el(
          'div',
          { id: 'k8s-not-configured', className: 'notice', role: 'status' },
          el('h3', { textContent: t.k8sNotConfiguredTitle }),
          el('p', { textContent: `${t.k8sNotConfigured} (503 ${error.full})` }),
        ),
      );
      return node;
    }
    node.append(problem(error));
    return node;
  }
  // The cluster answered: nodes and pods may still fail on their own (e.g. RBAC).
  await Promise.all([
    api<NodesResponse>('/api/v1/k8s/nodes').then(
      ({ items }) =>
        node.append(
          table(
            t.nodes,
            [
              [t.colName, (n) => n.name],
              [t.roles, (n) => n.roles.join(', ') || '–'],
              [t.colStatus, (n) => n.status],
              ['CPU', (n) => ofAllocatable(n.usage?.cpuPercent)],
              [t.memory, (n) => ofAllocatable(n.usage?.memoryPercent)],
              ['kubelet', (n) => n.kubeletVersion],
            ],
            items,
            { id: 'k8s-nodes' },
          ),
        ),
      (error: unknown) => node.append(problem(error)),
    ),
    api<PodsResponse>('/api/v1/k8s/pods?limit=200').then(
      ({ items }) =>
        node.append(
          table(
            t.pods,
            [
              [t.colName, (p) => `${p.namespace}/${p.name}`],
              [t.colStatus, (p) => p.status],
              [t.ready, (p) => `${p.readyContainers}/${p.totalContainers}`],
              [t.restarts, (p) => count(p.restarts)],
              [t.node, (p) => p.node ?? '–'],
            ],
            items,
            { id: 'k8s-pods' },
          ),
        ),
      (error: unknown) => node.append(problem(error)),
    ),
  ]);
  return node;
}
