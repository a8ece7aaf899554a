import { api } from '../api.js';
import type { ContextBody, ContextResponse, LogEntry } from '../api-types.js';
import { button, el, facts } from '../dom.js';
import { problem } from '../feedback.js';
import { time } from '../format.js';
import { words } from '../i18n.js';

/** The top-level keys of a message that is a JSON object, with their scalar values; null otherwise. */
export function jsonMessage(message: string): [key: string, value: string][] | null {
  const text = message.trim();
  if (!text.startsWith('{')) return null;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    return Object.entries(parsed as Record<string, unknown>)
      .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      .map(([key, value]) => [key, String(value)]);
  } catch {
    return null;
  }
}

/**
 * One entry whole, in a side panel beside the list (Escape or × closes it): its fields, a message
 * that is JSON pretty-printed with its keys offered as filters (the phrase `key value`, which the
 * store's phrase index finds in the message), every attribute (each can become a filter, for or
 * against, or a column), its trace as a link to the waterfall when the user may see traces
 * (dashboard:read), its surrounding entries (same host or service), a copy button and the raw JSON.
 */
export function entryDetail(
  entry: LogEntry,
  options: {
    canSeeTraces: boolean;
    onFilter: (field: string, value: string, exclude: boolean) => void;
    onPhrase: (phrase: string, exclude: boolean) => void;
    onColumn: (field: string) => void;
    onClose: () => void;
  },
): HTMLElement {
  const t = words();
  const filterButtons = (field: string, value: unknown, column = false) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return el(
      'span',
      { className: 'filter-buttons' },
      button('+', () => options.onFilter(field, text, false), { className: 'include', ariaLabel: `${t.filterFor} ${field}: ${text}` }),
      button('−', () => options.onFilter(field, text, true), { className: 'exclude', ariaLabel: `${t.filterOut} ${field}: ${text}` }),
      column &&
        button('▥', () => options.onColumn(field), { className: 'add-column', ariaLabel: `${t.addColumn}: ${field}`, title: t.addColumn }),
    );
  };
  const trace = entry.trace_id
    ? options.canSeeTraces
      ? el('a', { href: `#/apm?trace=${encodeURIComponent(entry.trace_id)}`, id: 'trace-link', textContent: entry.trace_id })
      : el('code', { textContent: entry.trace_id })
    : '–';
  const attributes = Object.entries(entry.attributes ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const close = button('×', options.onClose, { className: 'close', ariaLabel: t.close, id: 'detail-close' });
  const copied = el('span', { role: 'status', className: 'muted' });
  const copy = button(
    t.copyEntry,
    () =>
      void navigator.clipboard.writeText(JSON.stringify(entry, null, 2)).then(
        () => (copied.textContent = t.copied),
        (error: unknown) => copied.replaceChildren(problem(error)),
      ),
    { id: 'detail-copy' },
  );
  const pairs = jsonMessage(entry.message);
  const message = pairs
    ? el(
        'div',
        {},
        el('pre', { className: 'message json-message', textContent: JSON.stringify(JSON.parse(entry.message), null, 2) }),
        el(
          'table',
          { className: 'attributes', id: 'json-keys' },
          el('caption', { textContent: t.jsonMessage }),
          el(
            'tbody',
            {},
            ...pairs.map(([key, value]) =>
              el(
                'tr',
                {},
                el('th', { scope: 'row', textContent: key }),
                el('td', { textContent: value }),
                el(
                  'td',
                  { className: 'filter-buttons' },
                  button('+', () => options.onPhrase(`${key} ${value}`, false), {
                    className: 'include',
                    ariaLabel: `${t.filterFor} ${key}: ${value}`,
                  }),
                  button('−', () => options.onPhrase(`${key} ${value}`, true), {
                    className: 'exclude',
                    ariaLabel: `${t.filterOut} ${key}: ${value}`,
                  }),
                ),
              ),
            ),
          ),
        ),
      )
    : el('pre', { className: 'message', textContent: entry.message });

  const node = el(
    'section',
    { id: 'entry-detail', className: 'detail-panel', ariaLabelledBy: 'entry-detail-title', tabIndex: -1 },
    el('div', { className: 'panel-head' }, el('h2', { id: 'entry-detail-title', textContent: t.details }), copy, copied, close),
    facts([
      [t.colTime, time(entry['@timestamp'])],
      [t.colLevel, entry.level ? el('span', {}, entry.level, filterButtons('level', entry.level)) : '–'],
      [t.colService, entry.service ? el('span', {}, entry.service, filterButtons('service', entry.service)) : '–'],
      [t.colHost, entry.host ? el('span', {}, entry.host, filterButtons('host', entry.host)) : '–'],
      [t.trace, trace],
      [t.span, entry.span_id ?? '–'],
    ]),
    el('h3', { textContent: t.colMessage }),
    message,
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
                el('td', {}, filterButtons(name, value, true)),
              ),
            ),
          ),
        )
      : el('p', { textContent: '–' }),
    surrounding(entry),
    el(
      'details',
      {},
      el('summary', { textContent: 'JSON' }),
      el('pre', { className: 'json', textContent: JSON.stringify(entry, null, 2) }),
    ),
  );
  node.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      options.onClose();
    }
  });
  return node;
}

/** The entries around this one (POST /api/v1/logs/context), of the same host, service or all, oldest first. */
function surrounding(entry: LogEntry): HTMLElement {
  const t = words();
  const by = el(
    'select',
    { id: 'context-by' },
    el('option', { value: 'host', textContent: t.sameHost, disabled: !entry.host }),
    el('option', { value: 'service', textContent: t.sameService, disabled: !entry.service }),
    el('option', { value: 'none', textContent: t.allEntries }),
  );
  by.value = entry.host ? 'host' : entry.service ? 'service' : 'none';
  const list = el('ol', { id: 'context-list', className: 'context-list' });
  const line = (other: ContextResponse['entry'], self = false) =>
    el(
      'li',
      { className: self ? 'context-self' : '' },
      el('span', { className: 'c-time', textContent: `${time(other['@timestamp'])} ` }),
      el('span', { className: `level-${other.level ?? ''}`, textContent: other.level ? `${other.level} ` : '' }),
      self ? el('strong', { textContent: other.message }) : other.message,
    );
  const show = async () => {
    const body: ContextBody = { '@timestamp': entry['@timestamp'], id: entry.id, by: by.value as ContextBody['by'], before: 10, after: 10 };
    const answer = await api<ContextResponse>('/api/v1/logs/context', { method: 'POST', body: JSON.stringify(body) });
    list.replaceChildren(
      ...answer.before.map((other) => line(other)),
      line(answer.entry, true),
      ...answer.after.map((other) => line(other)),
    );
  };
  const go = button(t.showSurrounding, () => void show().catch((error: unknown) => list.replaceChildren(el('li', {}, problem(error)))), {
    id: 'context-show',
  });
  return el(
    'section',
    { className: 'context', ariaLabelledBy: 'context-title' },
    el('h3', { id: 'context-title', textContent: t.surrounding }),
    el('label', { htmlFor: 'context-by', className: 'visually-hidden', textContent: t.surrounding }),
    by,
    go,
    list,
  );
}
