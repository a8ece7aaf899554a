import type { HistogramBucket } from '../api-types.js';
import { el, svg } from '../dom.js';

/**
 * The histogram of the range as SVG bars (at most ~60 buckets, the API's choice). Dragging across it
 * selects buckets; `onZoom` gets their absolute range.
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
    chart.append(
      svg(
        'rect',
        { x: index * 10 + 1, y: 100 - height, width: 8, height, class: 'bar', 'data-ts': bucket.ts, 'data-count': bucket.count },
        svg('title', {}, `${bucket.ts}: ${bucket.count}`),
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
    if (b - a < 0.01) return;
    const first = Math.min(buckets.length - 1, Math.floor(a * buckets.length));
    const last = Math.min(buckets.length - 1, Math.floor(b * buckets.length));
    onZoom(buckets[first]!.ts, new Date(Date.parse(buckets[last]!.ts) + intervalMs).toISOString());
  });
  return chart;
}

/** The histogram's figure, filled once the API answers. */
export function histogramFigure(caption: string): { node: HTMLElement; show: (chart: SVGSVGElement) => void } {
  const node = el('figure', { id: 'histogram' }, el('figcaption', { textContent: caption }));
  return { node, show: (chart) => node.replaceChildren(el('figcaption', { textContent: caption }), chart) };
}
