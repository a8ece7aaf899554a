import { el } from '../dom.js';
import { words } from '../i18n.js';
import { RANGES, relativeMs, timeRange } from './search.js';
import { attachSuggestions, remember } from './suggest.js';
import { inputTime, inputValue, zoneName } from '../time-zone.js';

export interface QueryBar {
  node: HTMLElement;
  query: HTMLInputElement;
  /** Marks a syntax error of the query at its 0-based position (the API's `position`), or clears it. */
  markError(message: string | null, position?: number): void;
}

/**
 * The query, the time range (relative, or absolute in the chosen zone: time-zone.ts) and live tail. Submitting writes the
 * search into the URL (`change`), which is what runs it.
 */
export function queryBar(params: URLSearchParams, change: (changes: Record<string, string | null>) => void): QueryBar {
  const t = words();
  const query = el('input', { id: 'query', type: 'search', value: params.get('q') ?? '', autocomplete: 'off', spellcheck: false });
  query.setAttribute('aria-describedby', 'query-error');
  const rangeSelect = el(
    'select',
    { id: 'range' },
    ...Object.keys(RANGES).map((key) => el('option', { value: key, textContent: `${t.last} ${key}` })),
    el('option', { value: 'relative', textContent: t.relativeRange }),
    el('option', { value: 'custom', textContent: t.custom }),
  );
  // A relative range typed as Grafana and Kibana write it: now-15m, now-2h, now-3d (s m h d w).
  const relativeInput = el('input', {
    id: 'relative',
    value: '',
    placeholder: 'now-15m',
    autocomplete: 'off',
    spellcheck: false,
    pattern: '(now-)?[1-9][0-9]{0,5}[smhdw]',
    title: t.relativeHint,
  });
  const relativeBox = el(
    'span',
    { className: 'custom', hidden: true },
    el('label', { htmlFor: 'relative', textContent: t.relativeRange }),
    relativeInput,
  );
  const absolute = Boolean(params.get('from') && params.get('to'));
  // A relative range other than the presets (a saved search's `now-45m`): offered as it is.
  const relative = params.get('range');
  if (relative && !Object.hasOwn(RANGES, relative) && relativeMs(relative) !== undefined)
    rangeSelect.insertBefore(el('option', { value: relative, textContent: relative }), rangeSelect.lastElementChild);
  rangeSelect.value = absolute ? 'custom' : (params.get('range') ?? '1h');
  // datetime-local has no zone: the console shows and reads it in the chosen one, and names it.
  const local = (iso: string | null) => (iso ? inputValue(Date.parse(iso)) : '');
  const fromInput = el('input', { id: 'from', type: 'datetime-local', step: 1, value: local(params.get('from')) });
  const toInput = el('input', { id: 'to', type: 'datetime-local', step: 1, value: local(params.get('to')) });
  const custom = el(
    'span',
    { className: 'custom', hidden: !absolute },
    el('label', { htmlFor: 'from', textContent: `${t.from} (${zoneName()})` }),
    fromInput,
    el('label', { htmlFor: 'to', textContent: `${t.to} (${zoneName()})` }),
    toInput,
  );
  const live = el('input', { id: 'live', type: 'checkbox', checked: params.get('live') === '1', disabled: absolute });
  const error = el('div', { id: 'query-error', className: 'query-error', role: 'alert' });

  const suggestions = attachSuggestions(query, () => timeRange(params));
  const submit = () => {
    remember(query.value);
    if (rangeSelect.value === 'relative') {
      const text = relativeInput.value.trim();
      if (relativeMs(text) === undefined) {
        relativeInput.setCustomValidity(t.relativeHint);
        relativeInput.reportValidity();
        relativeInput.focus();
        return;
      }
      relativeInput.setCustomValidity('');
      change({ q: query.value, range: text.startsWith('now-') ? text : `now-${text}`, from: null, to: null });
    } else if (rangeSelect.value === 'custom') {
      const from = inputTime(fromInput.value);
      const to = inputTime(toInput.value);
      if (!from || !to) {
        (from ? toInput : fromInput).focus();
        return;
      }
      change({ q: query.value, range: null, from, to, live: null });
    } else change({ q: query.value, range: rangeSelect.value, from: null, to: null });
  };
  const form = el(
    'form',
    { className: 'query', role: 'search' },
    el('label', { htmlFor: 'query', textContent: t.query }),
    query,
    suggestions,
    el('label', { htmlFor: 'range', textContent: t.range }),
    rangeSelect,
    relativeBox,
    custom,
    el('button', { type: 'submit', id: 'search', textContent: t.search }),
    el('label', { className: 'live' }, live, ` ${t.live}`),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });
  rangeSelect.addEventListener('change', () => {
    custom.hidden = rangeSelect.value !== 'custom';
    relativeBox.hidden = rangeSelect.value !== 'relative';
    if (rangeSelect.value === 'relative') {
      relativeInput.value ||= 'now-15m';
      relativeInput.focus();
      relativeInput.select();
    } else if (rangeSelect.value !== 'custom') submit();
    else {
      // Start from the range on screen.
      const now = Date.now();
      fromInput.value ||= inputValue(now - 3_600_000);
      toInput.value ||= inputValue(now);
      fromInput.focus();
    }
  });
  live.addEventListener('change', () => change({ live: live.checked ? '1' : null }));

  return {
    node: el('div', { className: 'query-bar' }, form, error),
    query,
    markError(message, position) {
      if (message === null) {
        error.replaceChildren();
        delete error.dataset.position;
        query.removeAttribute('aria-invalid');
        return;
      }
      query.setAttribute('aria-invalid', 'true');
      error.replaceChildren(
        el('p', { className: 'error', textContent: position === undefined ? message : `${message} (${t.atPosition} ${position + 1})` }),
      );
      if (position === undefined) return;
      // The query again, the character at the position marked: where the parser stopped.
      const text = query.value;
      const at = Math.min(position, text.length);
      error.dataset.position = String(position);
      error.append(
        el(
          'pre',
          { className: 'caret', ariaHidden: 'true' },
          text.slice(0, at),
          el('mark', { textContent: text.slice(at, at + 1) || ' ' }),
          text.slice(at + 1),
        ),
      );
      query.focus();
      query.setSelectionRange(at, Math.min(text.length, at + 1));
    },
  };
}
