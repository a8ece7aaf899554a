import type { LogEntry } from '../api-types.js';
import { button, el, facts } from '../dom.js';
import { time } from '../format.js';
import { words } from '../i18n.js';

/**
 * One entry whole: its fields, every attribute (each can become a filter, for or against), its trace
 * as a link to the waterfall when the user may see traces (dashboard:read), and the raw JSON.
 */
export function entryDetail(
  entry: LogEntry,
  options: { canSeeTraces: boolean; onFilter: (field: string, value: string, exclude: boolean) => void; onClose: () => void },
): HTMLElement {
  const t = words();
  const filterButtons = (field: string, value: unknown) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return el(
      'span',
      { className: 'filter-buttons' },
      button('+', () => options.onFilter(field, text, false), { className: 'include', ariaLabel: `${t.filterFor} ${field}: ${text}` }),
      button('−', () => options.onFilter(field, text, true), { className: 'exclude', ariaLabel: `${t.filterOut} ${field}: ${text}` }),
    );
  };
  const trace = entry.trace_id
    ? options.canSeeTraces
      ? el('a', { href: `#/apm?trace=${encodeURIComponent(entry.trace_id)}`, id: 'trace-link', textContent: entry.trace_id })
      : el('code', { textContent: entry.trace_id })
    : '–';
  const attributes = Object.entries(entry.attributes ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const close = button('×', options.onClose, { className: 'close', ariaLabel: t.close, id: 'detail-close' });
  const node = el(
    'section',
    { id: 'entry-detail', className: 'detail-panel', ariaLabelledBy: 'entry-detail-title', tabIndex: -1 },
    el('div', { className: 'panel-head' }, el('h2', { id: 'entry-detail-title', textContent: t.details }), close),
    facts([
      [t.colTime, time(entry['@timestamp'])],
      [t.colLevel, entry.level ? el('span', {}, entry.level, filterButtons('level', entry.level)) : '–'],
      [t.colService, entry.service ? el('span', {}, entry.service, filterButtons('service', entry.service)) : '–'],
      [t.colHost, entry.host ? el('span', {}, entry.host, filterButtons('host', entry.host)) : '–'],
      [t.trace, trace],
      [t.span, entry.span_id ?? '–'],
    ]),
    el('h3', { textContent: t.colMessage }),
    el('pre', { className: 'message', textContent: entry.message }),
    el('h3', { textContent: t.attributes }),
    attributes.length
      ? el(
          'table',
          { className: 'attributes' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              el('th', { scope: 'col', textContent: t.colField }),
              el('th', { scope: 'col', textContent: t.colValue }),
              el('th', { scope: 'col', textContent: t.colFilter }),
            ),
          ),
          el(
            'tbody',
            {},
            ...attributes.map(([name, value]) =>
              el(
                'tr',
                {},
                el('th', { scope: 'row', textContent: name }),
                el('td', { textContent: typeof value === 'string' ? value : JSON.stringify(value) }),
                el('td', {}, filterButtons(name, value)),
              ),
            ),
          ),
        )
      : el('p', { textContent: '–' }),
    el(
      'details',
      {},
      el('summary', { textContent: 'JSON' }),
      el('pre', { className: 'json', textContent: JSON.stringify(entry, null, 2) }),
    ),
  );
  return node;
}
