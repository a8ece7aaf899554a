import type { LogEntry } from '../api-types.js';
import { el } from '../dom.js';
import { time } from '../format.js';

/** Rows drawn beyond the visible ones, above and below, so a fast scroll shows no blank. */
const OVERSCAN = 20;
/** Ask for the next page when the view comes this close (in rows) to the last loaded one. */
const PREFETCH = 100;

export interface ResultsTable {
  node: HTMLElement;
  /** The rows loaded so far (newest first); replaces what was shown. */
  show(entries: readonly LogEntry[]): void;
  /** At the top (live tail refreshes only then, so it never yanks the rows from under the reader). */
  atTop(): boolean;
  scrollToTop(): void;
}

/**
 * The result rows, windowed: however many are loaded (up to 10,000), only those in view and a few
 * around them are in the DOM, between two spacer rows as tall as the rest; rows have one fixed
 * height (one line, the message cut with an ellipsis: the whole entry opens in the detail panel).
 * Scrolling near the end asks for more (`onMore`), which is how the table pages.
 */
export function resultsTable(options: {
  headers: [time: string, level: string, service: string, host: string, message: string];
  label: string;
  onOpen: (entry: LogEntry, row: number) => void;
  onMore: () => void;
}): ResultsTable {
  const topSpacer = el('tr', { className: 'spacer', ariaHidden: 'true' }, el('td', { colSpan: 5 }));
  const bottomSpacer = el('tr', { className: 'spacer', ariaHidden: 'true' }, el('td', { colSpan: 5 }));
  const body = el('tbody');
  const classes = ['c-time', 'c-level', 'c-service', 'c-host', 'c-message'];
  const table = el(
    'table',
    { id: 'results-table' },
    el(
      'thead',
      {},
      el('tr', {}, ...options.headers.map((name, i) => el('th', { scope: 'col', className: classes[i], textContent: name }))),
    ),
    body,
  );
  // Focusable so that the keyboard scrolls it (axe: scrollable regions must be reachable).
  const scroller = el('div', { id: 'results', className: 'results', tabIndex: 0, role: 'region', ariaLabel: options.label }, table);

  let entries: readonly LogEntry[] = [];
  let rowHeight = 0;
  let drawn = '';
  let selected = -1;

  const row = (entry: LogEntry, index: number) => {
    const open = el('button', { type: 'button', className: 'expand', textContent: time(entry['@timestamp']) });
    const tr = el(
      'tr',
      { className: `entry${index === selected ? ' selected' : ''}` },
      el('td', { className: 'c-time' }, open),
      el('td', { className: `c-level level-${entry.level ?? ''}`, textContent: entry.level ?? '' }),
      el('td', { className: 'c-service', textContent: entry.service ?? '' }),
      el('td', { className: 'c-host', textContent: entry.host ?? '' }),
      el('td', { className: 'c-message', textContent: entry.message, title: entry.message }),
    );
    tr.setAttribute('aria-rowindex', String(index + 2));
    tr.dataset.index = String(index);
    tr.addEventListener('click', () => {
      selected = index;
      for (const other of body.querySelectorAll('tr.selected')) other.classList.remove('selected');
      tr.classList.add('selected');
      options.onOpen(entry, index);
    });
    return tr;
  };

  const draw = (force = false) => {
    if (entries.length === 0) {
      body.replaceChildren();
      drawn = '';
      return;
    }
    if (!rowHeight) {
      // Measured once from a real row on screen: the CSS decides the height, the code follows it.
      body.replaceChildren(row(entries[0]!, 0));
      rowHeight = body.firstElementChild!.getBoundingClientRect().height;
      if (!rowHeight) return; // not on screen yet: the ResizeObserver draws once it is
    }
    const first = Math.max(0, Math.floor(scroller.scrollTop / rowHeight) - OVERSCAN);
    const last = Math.min(entries.length, Math.ceil((scroller.scrollTop + scroller.clientHeight) / rowHeight) + OVERSCAN);
    const key = `${first}:${last}:${entries.length}`;
    if (force || key !== drawn) {
      drawn = key;
      topSpacer.style.height = `${first * rowHeight}px`;
      bottomSpacer.style.height = `${(entries.length - last) * rowHeight}px`;
      body.replaceChildren(topSpacer, ...entries.slice(first, last).map((entry, i) => row(entry, first + i)), bottomSpacer);
    }
    if (last >= entries.length - PREFETCH) options.onMore();
  };

  let frame = 0;
  scroller.addEventListener('scroll', () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => draw());
  });
  // The visible height changes with the window: draw what now fits.
  new ResizeObserver(() => draw()).observe(scroller);

  return {
    node: scroller,
    show(next) {
      if (next.length < entries.length || next[0]?.id !== entries[0]?.id) selected = -1;
      entries = next;
      table.setAttribute('aria-rowcount', String(entries.length + 1));
      draw(true);
    },
    atTop: () => scroller.scrollTop === 0,
    scrollToTop: () => (scroller.scrollTop = 0),
  };
}
