import { el, svg } from './dom.js';

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
const HEIGHT = 100;

const clock = (iso: string) => iso.slice(11, 16);

/**
 * A line chart that fills its box: the plot is stretched to any width (preserveAspectRatio none,
 * strokes kept at one width by `vector-effect`), and the axes' words are HTML beside it, so text
 * never scales with the chart. The legend gives each series' latest value, or its total.
 */
export function lineChart(options: {
  id?: string;
  title: string;
  series: Series[];
  format: (value: number) => string;
  legend?: 'latest' | 'total';
}): HTMLElement {
  const { series, format } = options;
  const values = series.flatMap((s) => s.points.map((p) => p.value)).filter((v): v is number => v !== null);
  const max = Math.max(...values, 0) || 1;
  const length = Math.max(1, ...series.map((s) => s.points.length));
  const x = (index: number) => (length <= 1 ? WIDTH / 2 : (index / (length - 1)) * WIDTH);
  const y = (value: number) => (1 - value / max) * HEIGHT;

  const shown = (s: Series): number | null =>
    options.legend === 'total'
      ? s.points.reduce((sum, p) => sum + (p.value ?? 0), 0)
      : ([...s.points].reverse().find((p) => p.value !== null)?.value ?? null);
  const legendText = (s: Series) => `${s.name}: ${shown(s) === null ? '–' : format(shown(s)!)}`;
  const plot = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    preserveAspectRatio: 'none',
    role: 'img',
    'aria-label': `${options.title}: ${series.map(legendText).join(', ')}`,
    class: 'line-chart',
  });
  for (const fraction of [0, 0.5, 1])
    plot.append(svg('line', { x1: 0, x2: WIDTH, y1: y(max * fraction), y2: y(max * fraction), class: 'guide' }));
  series.forEach((s, index) => {
    // A gap (null) ends a segment: no line is drawn across missing data. A point alone between
    // gaps is a segment of no length in a thicker path, which the round line cap draws as a dot.
    let line = '';
    let dots = '';
    s.points.forEach((point, i) => {
      if (point.value === null) return;
      const at = `${x(i).toFixed(1)},${y(point.value).toFixed(1)}`;
      const afterGap = s.points[i - 1]?.value == null;
      if (afterGap && s.points[i + 1]?.value == null) dots += `M${at}h0.01`;
      else line += `${afterGap ? 'M' : 'L'}${at}`;
    });
    plot.append(svg('path', { d: line, class: `line s${index % 6}`, 'data-series': s.name }));
    if (dots) plot.append(svg('path', { d: dots, class: `line dots s${index % 6}` }));
  });
  const first = series[0]?.points[0]?.ts;
  const last = series[0]?.points.at(-1)?.ts;

  return el(
    'figure',
    { className: 'chart', ...(options.id ? { id: options.id } : {}) },
    el('figcaption', { textContent: options.title }),
    el(
      'div',
      { className: 'plot' },
      el(
        'div',
        { className: 'y-axis', ariaHidden: 'true' },
        ...[1, 0.5, 0].map((fraction) => el('span', { textContent: format(max * fraction) })),
      ),
      plot,
      el(
        'div',
        { className: 'x-axis', ariaHidden: 'true' },
        el('span', { textContent: first ? clock(first) : '' }),
        el('span', { textContent: last ? clock(last) : '' }),
      ),
    ),
    el(
      'ul',
      { className: 'legend' },
      ...series.map((s, index) => el('li', {}, el('span', { className: `swatch s${index % 6}`, ariaHidden: 'true' }), legendText(s))),
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
