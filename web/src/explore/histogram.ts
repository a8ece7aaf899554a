import type { HistogramBucket } from '../api-types.js';
import { el, svg } from '../dom.js';
import { count, time } from '../format.js';

/** Levels stacked bottom up, in this order; anything else is "other". */
export const STACKED_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

/** A bucket's counts per stack level (fatal and critical count as error, trace as debug). */
function stackOf(bucket: HistogramBucket): [level: string, count: number][] {
  const counts = new Map<string, number>([...STACKED_LEVELS, 'other'].map((level) => [level, 0]));
  let grouped = 0;
  for (const [level, n] of Object.entries(bucket.groups ?? {})) {
    const key = level === 'fatal' || level === 'critical' ? 'error' : level === 'trace' ? 'debug' : counts.has(level) ? level : 'other';
    counts.set(key, counts.get(key)! + n);
    grouped += n;
  }
  counts.set('other', counts.get('other')! + Math.max(0, bucket.count - grouped));
  return [...counts].filter(([, n]) => n > 0);
}

/**
 * The histogram of the range as SVG bars (at most ~60 buckets, the API's choice), each stacked by
 * level (Okabe–Ito colours, which hold for colour-blind readers; the legend names them). Clicking a
 * bar zooms to it; dragging across it selects buckets; `onZoom` gets their absolute range.
 */
export function histogram(
  caption: string,
  buckets: HistogramBucket[],
  intervalMs: number,
  onZoom: (from: string, to: string) => void,
): SVGSVGElement {
  const max = Math.max(1, ...buckets.map((bucket) => bucket.count));
  const width = Math.max(1, buckets.length) * 10;
  const total = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  const chart = svg('svg', { viewBox: `0 0 ${width} 100`, preserveAspectRatio: 'none', role: 'img', 'aria-label': `${caption}: ${total}` });
  buckets.forEach((bucket, index) => {
    const height = (bucket.count / max) * 100;
    const stack = stackOf(bucket);
    let top = 100;
    for (const [level, n] of stack) {
      const part = (n / max) * 100;
      top -= part;
      chart.append(
        svg('rect', { x: index * 10 + 1, y: top, width: 8, height: part, class: `segment stack-${level}`, 'data-level': level }),
      );
    }
    // The whole bar on top (transparent): its title and the counts a reader (and a test) can check.
    chart.append(
      svg(
        'rect',
        { x: index * 10 + 1, y: 100 - height, width: 8, height, class: 'bar', 'data-ts': bucket.ts, 'data-count': bucket.count },
        svg(
          'title',
          {},
          `${bucket.ts}: ${bucket.count}${stack.length ? ` (${stack.map(([level, n]) => `${level} ${n}`).join(', ')})` : ''}`,
        ),
      ),
    );
  });
  const selection = svg('rect', { y: 0, height: 100, class: 'selection', width: 0 });
  chart.append(selection);

  let start: number | undefined;
  const position = (event: PointerEvent) => {
    const box = chart.getBoundingClientRect();
    return Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
  };
  chart.addEventListener('pointerdown', (event) => {
    start = position(event);
    chart.setPointerCapture(event.pointerId);
  });
  chart.addEventListener('pointermove', (event) => {
    if (start === undefined) return;
    const [a, b] = [start, position(event)].sort((x, y) => x - y) as [number, number];
    selection.setAttribute('x', String(a * width));
    selection.setAttribute('width', String((b - a) * width));
  });
  chart.addEventListener('pointerup', (event) => {
    if (start === undefined || buckets.length === 0) return;
    const [a, b] = [start, position(event)].sort((x, y) => x - y) as [number, number];
    start = undefined;
    selection.setAttribute('width', '0');
    // A click (no drag): the bar under it.
    const first = Math.min(buckets.length - 1, Math.floor(a * buckets.length));
    if (b - a < 0.01) {
      if (buckets[first]!.count > 0) onZoom(buckets[first]!.ts, new Date(Date.parse(buckets[first]!.ts) + intervalMs).toISOString());
      return;
    }
    const last = Math.min(buckets.length - 1, Math.floor(b * buckets.length));
    onZoom(buckets[first]!.ts, new Date(Date.parse(buckets[last]!.ts) + intervalMs).toISOString());
  });
  return chart;
}

/** The time axis and counts under the chart (HTML: SVG text would stretch with the bars), and the legend. */
export function histogramAxis(buckets: HistogramBucket[], intervalMs: number, labels: { max: string }): HTMLElement[] {
  if (buckets.length === 0) return [];
  const max = Math.max(...buckets.map((bucket) => bucket.count));
  const end = new Date(Date.parse(buckets.at(-1)!.ts) + intervalMs).toISOString();
  const mid = buckets[Math.floor(buckets.length / 2)]!.ts;
  const at = (iso: string) => el('span', { textContent: time(iso) });
  const totals = new Map<string, number>();
  for (const bucket of buckets) for (const [level, n] of stackOf(bucket)) totals.set(level, (totals.get(level) ?? 0) + n);
  return [
    el('div', { className: 'axis', id: 'histogram-axis' }, at(buckets[0]!.ts), at(mid), at(end)),
    el(
      'ul',
      { className: 'legend', id: 'histogram-legend' },
      el('li', { className: 'muted', textContent: `${labels.max} ${count(max)}` }),
      ...[...STACKED_LEVELS, 'other']
        .filter((level) => totals.has(level))
        .map((level) => el('li', {}, el('span', { className: `swatch stack-${level}` }), `${level} ${count(totals.get(level)!)}`)),
    ),
  ];
}

/** The histogram's figure, filled once the API answers. */
export function histogramFigure(caption: string): { node: HTMLElement; show: (chart: SVGSVGElement, ...below: HTMLElement[]) => void } {
  const node = el('figure', { id: 'histogram' }, el('figcaption', { textContent: caption }));
  return { node, show: (chart, ...below) => node.replaceChildren(el('figcaption', { textContent: caption }), chart, ...below) };
}
