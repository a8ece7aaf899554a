import type { MapEdge, MapNode } from '../api-types.js';
import { el, svg } from '../dom.js';
import { millis, percent } from '../format.js';

const NODE_W = 160;
const NODE_H = 46;
const GAP_X = 90;
const GAP_Y = 26;

/**
 * Columns by call depth: a node sits one column right of the deepest caller that reaches it
 * (callers left, callees right). Cycles stop at the number of nodes, so the loop always ends.
 */
export function layers(nodes: MapNode[], edges: MapEdge[]): Map<string, number> {
  const layer = new Map(nodes.map((node) => [node.id, 0]));
  for (let round = 0; round < nodes.length; round += 1) {
    let moved = false;
    for (const edge of edges) {
      const next = Math.min(nodes.length - 1, (layer.get(edge.source) ?? 0) + 1);
      if (edge.source !== edge.target && next > (layer.get(edge.target) ?? 0)) {
        layer.set(edge.target, next);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return layer;
}

/** The service map as a graph: services as boxes (a link to their traces), calls as arrows with their figures. */
export function serviceGraph(label: string, nodes: MapNode[], edges: MapEdge[], href: (service: string) => string): SVGSVGElement {
  const layer = layers(nodes, edges);
  const columns = new Map<number, MapNode[]>();
  for (const node of [...nodes].sort((a, b) => a.name.localeCompare(b.name))) {
    const column = layer.get(node.id) ?? 0;
    columns.set(column, [...(columns.get(column) ?? []), node]);
  }
  const position = new Map<string, { x: number; y: number }>();
  for (const [column, members] of columns)
    members.forEach((node, row) => position.set(node.id, { x: 10 + column * (NODE_W + GAP_X), y: 10 + row * (NODE_H + GAP_Y) }));
  const width = 20 + Math.max(1, columns.size) * (NODE_W + GAP_X) - GAP_X;
  const height = 20 + Math.max(1, ...[...columns.values()].map((m) => m.length)) * (NODE_H + GAP_Y) - GAP_Y + 30;

  // Drawn at its natural size (a wide map scrolls sideways), so its text keeps the size it was written in.
  const graph = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'group',
    'aria-label': label,
    class: 'service-map',
    id: 'service-graph',
  });
  graph.append(
    svg(
      'defs',
      {},
      svg(
        'marker',
        { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' }),
      ),
    ),
  );
  for (const edge of edges) {
    const from = position.get(edge.source);
    const to = position.get(edge.target);
    if (!from || !to) continue;
    const x1 = from.x + NODE_W;
    const y1 = from.y + NODE_H / 2;
    const x2 = to.x;
    const y2 = to.y + NODE_H / 2;
    // A call back to the left (a cycle) loops below the boxes instead of crossing them.
    const back = x2 <= x1;
    const d = back
      ? `M${x1},${y1} C${x1 + 40},${height - 5} ${x2 - 40},${height - 5} ${x2},${y2}`
      : `M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}`;
    const text = `${edge.requests} req, ${percent(edge.errorRate, 0)} err, p95 ${millis(edge.p95Ms)}`;
    graph.append(
      svg(
        'g',
        { class: `edge${edge.errors > 0 ? ' has-errors' : ''}`, 'data-source': edge.source, 'data-target': edge.target },
        svg('title', {}, `${edge.source} → ${edge.target}: ${text}`),
        svg('path', { d, 'marker-end': 'url(#arrow)' }),
        svg(
          'text',
          { x: (x1 + x2) / 2, y: back ? height - 8 : (y1 + y2) / 2 - 5, 'text-anchor': 'middle', class: 'edge-label' },
          `${edge.requests}`,
        ),
      ),
    );
  }
  for (const node of nodes) {
    const at = position.get(node.id)!;
    const link = svg(
      'a',
      {
        href: href(node.name),
        class: `node${node.errors > 0 ? ' has-errors' : ''}${node.instrumented ? '' : ' uninstrumented'}`,
        'data-service': node.name,
      },
      svg('title', {}, `${node.name}: ${node.requests} req, ${percent(node.errorRate)} errors, p95 ${millis(node.p95Ms)}`),
      svg('rect', { x: at.x, y: at.y, width: NODE_W, height: NODE_H, rx: 6 }),
      svg('text', { x: at.x + 8, y: at.y + 18, class: 'node-name' }, node.name.length > 22 ? `${node.name.slice(0, 21)}…` : node.name),
      svg('text', { x: at.x + 8, y: at.y + 36, class: 'node-figures' }, `${node.requests} req · p95 ${millis(node.p95Ms)}`),
    );
    graph.append(link);
  }
  return graph;
}

/** The graph in a figure that scrolls sideways when the map is wider than the page (the page adds the same figures as tables). */
export function serviceMapFigure(caption: string, graph: SVGSVGElement): HTMLElement {
  return el(
    'figure',
    { className: 'chart map' },
    el('figcaption', { textContent: caption }),
    el('div', { className: 'map-scroll' }, graph),
  );
}
