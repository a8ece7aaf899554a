import { el, svg } from './dom.js';
import { compact } from './format.js';

/**
 * Time-series line charts in SVG: a handful of series of at most a few hundred points each (the API
 * buckets them), so a path per series is all it takes. Colours come from CSS classes (s0…s5), which
 * the strict Content-Security-Policy allows where inline styles are not.
 */

export interface Point {
  ts: string;
  value: number | null;
}

export interface Series {
  name: string;
  points: Point[];
}

const WIDTH = 600;
const HEIGHT = 160;
const LEFT = 46;
const BOTTOM = 18;
const TOP = 6;

const clock = (iso: string) => iso.slice(11, 16);

export function lineChart(options: { id?: string; title: string; series: Series[]; format: (value: number) => string }): HTMLElement {
  const { series, format } = options;
  const values = series.flatMap((s) => s.points.map((p) => p.value)).filter((v): v is number => v !== null);
  const max = Math.max(...values, 0) || 1;
  const length = Math.max(1, ...series.map((s) => s.points.length));
  const x = (index: number) => LEFT + (length <= 1 ? 0 : (index / (length - 1)) * (WIDTH - LEFT - 4));
  const y = (value: number) => TOP + (1 - value / max) * (HEIGHT - TOP - BOTTOM);

  const latest = (s: Series) => [...s.points].reverse().find((p) => p.value !== null)?.value ?? null;
  const summary = series.map((s) => `${s.name} ${latest(s) === null ? '–' : format(latest(s)!)}`).join(', ');
  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-label': `${options.title}: ${summary}`,
    class: 'line-chart',
  });
  // Axes: three horizontal guides with their values, the first and last bucket's time.
  for (const fraction of [0, 0.5, 1]) {
    const value = max * fraction;
    chart.append(
      svg('line', { x1: LEFT, x2: WIDTH, y1: y(value), y2: y(value), class: 'guide' }),
      svg('text', { x: LEFT - 4, y: y(value) + 4, 'text-anchor': 'end', class: 'axis' }, compact(value)),
    );
  }
  const first = series[0]?.points[0]?.ts;
  const last = series[0]?.points.at(-1)?.ts;
  if (first && last)
    chart.append(
      svg('text', { x: LEFT, y: HEIGHT - 4, class: 'axis' }, clock(first)),
      svg('text', { x: WIDTH - 2, y: HEIGHT - 4, 'text-anchor': 'end', class: 'axis' }, clock(last)),
    );
  series.forEach((s, index) => {
    // A gap (null) ends a segment: no line is drawn across missing data.
    let d = '';
    let pen = 'M';
    s.points.forEach((point, i) => {
      if (point.value === null) {
        pen = 'M';
        return;
      }
      d += `${pen}${x(i).toFixed(1)},${y(point.value).toFixed(1)}`;
      pen = 'L';
    });
    // A lone point between gaps still shows, as a dot.
    const dots = s.points
      .map((point, i) => ({ point, i }))
      .filter(({ point, i }) => point.value !== null && s.points[i - 1]?.value == null && s.points[i + 1]?.value == null);
    chart.append(svg('path', { d, class: `line s${index % 6}`, 'data-series': s.name }));
    for (const { point, i } of dots) chart.append(svg('circle', { cx: x(i), cy: y(point.value!), r: 2.5, class: `dot s${index % 6}` }));
  });

  return el(
    'figure',
    { className: 'chart', ...(options.id ? { id: options.id } : {}) },
    el('figcaption', { textContent: options.title }),
    chart,
    el(
      'ul',
      { className: 'legend' },
      ...series.map((s, index) =>
        el(
          'li',
          {},
          el('span', { className: `swatch s${index % 6}`, ariaHidden: 'true' }),
          `${s.name}: ${latest(s) === null ? '–' : format(latest(s)!)}`,
        ),
      ),
    ),
  );
}

/** Horizontal bars of named values (top services, sources): a list, readable without the chart. */
export function barList(options: {
  id?: string;
  title: string;
  items: { label: string; value: number; note?: string }[];
  format: (value: number) => string;
}): HTMLElement {
  const max = Math.max(1, ...options.items.map((item) => item.value));
  return el(
    'figure',
    { className: 'chart bars', ...(options.id ? { id: options.id } : {}) },
    el('figcaption', { textContent: options.title }),
    el(
      'ul',
      {},
      ...options.items.map((item) => {
        const bar = el('span', { className: 'bar' });
        // CSSOM, not a style attribute: allowed by the Content-Security-Policy.
        bar.style.width = `${(item.value / max) * 100}%`;
        return el(
          'li',
          {},
          el('span', { className: 'label', textContent: item.label }),
          el('span', { className: 'track' }, bar),
          el('span', { className: 'value', textContent: `${options.format(item.value)}${item.note ? ` ${item.note}` : ''}` }),
        );
      }),
    ),
  );
}
