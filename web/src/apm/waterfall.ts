import type { Span } from '../api-types.js';
import { button, el, facts } from '../dom.js';
import { millis, time } from '../format.js';
import { words } from '../i18n.js';

/** Spans in tree order (each parent before its children, siblings by start), with their depth. */
export function treeOrder(spans: Span[]): { span: Span; depth: number }[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string | null, Span[]>();
  for (const span of spans) {
    // A parent that is not stored (an uninstrumented caller) makes the span a root.
    const parent = span.parentSpanId && ids.has(span.parentSpanId) ? span.parentSpanId : null;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  for (const list of children.values()) list.sort((a, b) => a.startTimeUs - b.startTimeUs);
  const out: { span: Span; depth: number }[] = [];
  const seen = new Set<string>();
  const visit = (parent: string | null, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      if (seen.has(span.spanId)) continue;
      seen.add(span.spanId);
      out.push({ span, depth });
      visit(span.spanId, depth + 1);
    }
  };
  visit(null, 0);
  return out;
}

/**
 * One trace as a waterfall: a row per span in tree order, its bar placed on the trace's time line,
 * the span's name indented by depth; a row opens to the span's attributes and events.
 */
export function waterfall(spans: Span[]): HTMLElement {
  const t = words();
  const start = Math.min(...spans.map((span) => span.startTimeUs));
  const end = Math.max(...spans.map((span) => span.startTimeUs + span.durationMs * 1000));
  const total = Math.max(1, end - start);
  const body = el('tbody');
  for (const { span, depth } of treeOrder(spans)) {
    const bar = el('span', { className: `span-bar${span.status.code === 'error' ? ' error' : ''}` });
    // CSSOM, not style attributes: the Content-Security-Policy allows these.
    bar.style.left = `${((span.startTimeUs - start) / total) * 100}%`;
    bar.style.width = `${Math.max(0.3, ((span.durationMs * 1000) / total) * 100)}%`;
    const detail = el(
      'tr',
      { className: 'span-detail', hidden: true },
      el(
        'td',
        { colSpan: 3 },
        facts([
          [t.colService, span.service],
          [t.kind, span.kind],
          [t.colStarted, time(span.startTime)],
          [t.colDuration, millis(span.durationMs)],
          [t.colStatus, `${span.status.code}${span.status.message ? `: ${span.status.message}` : ''}`],
          [t.peer, span.peerService ?? '–'],
          ['span', span.spanId],
        ]),
        el('pre', { className: 'json', textContent: JSON.stringify({ attributes: span.attributes, events: span.events }, null, 2) }),
      ),
    );
    const open = button(
      `${span.service}: ${span.name}`,
      () => {
        detail.hidden = !detail.hidden;
        open.ariaExpanded = String(!detail.hidden);
      },
      { className: 'span-name', ariaExpanded: 'false' },
    );
    open.style.marginLeft = `${depth * 1.1}rem`;
    body.append(
      el(
        'tr',
        { className: `span-row${span.status.code === 'error' ? ' error' : ''}` },
        el('td', { className: 'span-label' }, open),
        el('td', { className: 'span-timeline' }, el('span', { className: 'track' }, bar)),
        el('td', { className: 'span-duration', textContent: millis(span.durationMs) }),
      ),
      detail,
    );
  }
  return el(
    'table',
    { id: 'waterfall', className: 'waterfall' },
    el('caption', { textContent: `${t.waterfall}: ${spans.length} ${t.spans}, ${millis((end - start) / 1000)}` }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col', textContent: t.colSpan }),
        el('th', { scope: 'col', textContent: t.timeline }),
        el('th', { scope: 'col', textContent: t.colDuration }),
      ),
    ),
    body,
  );
}
