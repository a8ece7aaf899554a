import type { LogEntry } from '../api-types.js';
import { button, el } from '../dom.js';
import { time } from '../format.js';
import { words } from '../i18n.js';
import { columnValue, highlighted } from './search.js';

/** Rows drawn beyond the visible ones, above and below, so a fast scroll shows no blank. */
const OVERSCAN = 20;
/** Ask for the next page when the view comes this close (in rows) to the last loaded one. */
const PREFETCH = 100;
/** Columns with their own width and style; any other field is a plain column. */
const KNOWN = new Set(['level', 'service', 'host', 'message']);

export interface ResultsTable {
  node: HTMLElement;
  /** The rows loaded so far (in the search's order); replaces what was shown. */
  show(entries: readonly LogEntry[]): void;
  /** At the top (live tail refreshes only then, so it never yanks the rows from under the reader). */
  atTop(): boolean;
  scrollToTop(): void;
}

/**
 * The result rows, windowed: however many are loaded, only those in view and a few around them are
 * in the DOM, between two spacer rows as tall as the rest; rows have one fixed height (one line, the
 * message cut with an ellipsis: the whole entry opens in the detail panel). Scrolling near the end
 * asks for more (`onMore`), which is how the table pages. The time column comes first and sorts
 * (newest or oldest first); the others are the chosen columns, each movable and removable.
 */
export function resultsTable(options: {
  columns: readonly string[];
  /** The header of a column (translated for the fixed fields). */
  header: (column: string) => string;
  order: 'asc' | 'desc';
  /** Terms of the query marked in messages. */
  terms: readonly { text: string; prefix: boolean }[];
  label: string;
  onOpen: (entry: LogEntry, row: number) => void;
  onMore: () => void;
  onSort: (order: 'asc' | 'desc') => void;
  onColumns: (columns: string[]) => void;
}): ResultsTable {
  const t = words();
  const { columns } = options;
  const span = columns.length + 1;
  const topSpacer = el('tr', { className: 'spacer', ariaHidden: 'true' }, el('td', { colSpan: span }));
  const bottomSpacer = el('tr', { className: 'spacer', ariaHidden: 'true' }, el('td', { colSpan: span }));
  const body = el('tbody');
  const classOf = (column: string) => (KNOWN.has(column) ? `c-${column}` : 'c-field');
  const moved = (from: number, to: number) => {
    const next = [...columns];
    const [column] = next.splice(from, 1);
    next.splice(to, 0, column!);
    options.onColumns(next);
  };
  const timeHeader = el(
    'th',
    { scope: 'col', className: 'c-time', ariaSort: options.order === 'asc' ? 'ascending' : 'descending' },
    el('span', { className: 'label', textContent: options.header('@timestamp') }),
    button(options.order === 'asc' ? '↑' : '↓', () => options.onSort(options.order === 'asc' ? 'desc' : 'asc'), {
      id: 'sort-order',
      className: 'column-action',
      title: options.order === 'asc' ? t.oldestFirst : t.newestFirst,
      ariaLabel: `${options.order === 'asc' ? t.oldestFirst : t.newestFirst}: ${t.changeSort}`,
    }),
  );
  const columnHeader = (column: string, index: number) => {
    const name = options.header(column);
    const th = el(
      'th',
      { scope: 'col', className: classOf(column) },
      el('span', { className: 'label', textContent: name }),
      el(
        'span',
        { className: 'column-actions' },
        index > 0 &&
          button('‹', () => moved(index, index - 1), {
            className: 'column-action',
            ariaLabel: `${t.moveLeft}: ${name}`,
            title: t.moveLeft,
          }),
        index < columns.length - 1 &&
          button('›', () => moved(index, index + 1), {
            className: 'column-action',
            ariaLabel: `${t.moveRight}: ${name}`,
            title: t.moveRight,
          }),
        button('×', () => options.onColumns(columns.filter((other) => other !== column)), {
          className: 'column-action',
          ariaLabel: `${t.removeColumn}: ${name}`,
          title: t.removeColumn,
        }),
      ),
    );
    th.dataset.column = column;
    return th;
  };
  const table = el('table', { id: 'results-table' }, el('thead', {}, el('tr', {}, timeHeader, ...columns.map(columnHeader))), body);
  // Focusable so that the keyboard scrolls it (axe: scrollable regions must be reachable).
  const scroller = el('div', { id: 'results', className: 'results', tabIndex: 0, role: 'region', ariaLabel: options.label }, table);

  let entries: readonly LogEntry[] = [];
  let rowHeight = 0;
  let drawn = '';
  let selected = -1;

  const cell = (entry: LogEntry, column: string) => {
    const text = columnValue(entry, column);
    const className = column === 'level' ? `c-level level-${entry.level ?? ''}` : classOf(column);
    if (column === 'message') return el('td', { className, title: text }, ...highlighted(text, options.terms));
    return el('td', { className, textContent: text });
  };
  const row = (entry: LogEntry, index: number) => {
    const open = el('button', { type: 'button', className: 'expand', textContent: time(entry['@timestamp']) });
    const tr = el(
      'tr',
      { className: `entry${index === selected ? ' selected' : ''}` },
      el('td', { className: 'c-time' }, open),
      ...columns.map((column) => cell(entry, column)),
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
