import { api } from '../api.js';
import type { DistinctResponse, FieldsResponse } from '../api-types.js';
import { el } from '../dom.js';
import { fieldFilter } from './search.js';

/** Queries remembered in this browser, newest first. */
const HISTORY_KEY = 'gerbang.queries';
const HISTORY_SIZE = 20;
const MAX_SUGGESTIONS = 20;

export function queryHistory(): string[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]') as unknown;
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

/** Remembers a query that was run (kept in this browser only, the newest twenty). */
export function remember(query: string): void {
  const text = query.trim();
  if (!text) return;
  localStorage.setItem(HISTORY_KEY, JSON.stringify([text, ...queryHistory().filter((item) => item !== text)].slice(0, HISTORY_SIZE)));
}

let fieldNames: Promise<string[]> | undefined;

/**
 * Suggestions while typing, as a <datalist> of whole queries (the browser's own list: arrows and
 * Enter, nothing to learn): the word being typed completed to a field name (`lev` → `level:`), a
 * field's value completed from the distinct-values API (`level:er` → `level:"error"`), and the
 * queries run before in this browser.
 */
export function attachSuggestions(input: HTMLInputElement, range: () => { from: string; to: string }): HTMLDataListElement {
  const list = el('datalist', { id: 'query-suggestions' });
  input.setAttribute('list', 'query-suggestions');
  let asked = 0;
  const show = (options: string[]) =>
    list.replaceChildren(...[...new Set(options)].slice(0, MAX_SUGGESTIONS).map((value) => el('option', { value })));
  const update = async () => {
    const ticket = ++asked;
    const text = input.value;
    const history = queryHistory().filter((item) => item.toLowerCase().includes(text.trim().toLowerCase()));
    const match = /(^|\s|\()(-?)([^\s():"]*)(?::([^\s()"]*))?$/.exec(text);
    const options: string[] = [];
    if (match && text.trim() !== '') {
      const before = text.slice(0, match.index + match[1]!.length) + match[2]!;
      const [word, value] = [match[3]!, match[4]];
      if (value === undefined && word.length > 0) {
        fieldNames ??= api<FieldsResponse>('/api/v1/logs/fields').then(({ fields }) => fields.map((field) => field.name));
        const names = await fieldNames.catch(() => [] as string[]);
        options.push(...names.filter((name) => name.toLowerCase().startsWith(word.toLowerCase())).map((name) => `${before}${name}:`));
      } else if (value !== undefined && word.length > 0) {
        const query = new URLSearchParams({ limit: '10', ...range(), ...(value ? { q: value } : {}) });
        const answer = await api<DistinctResponse>(`/api/v1/logs/fields/${encodeURIComponent(word)}/distinct?${query.toString()}`).catch(
          () => undefined,
        );
        options.push(...(answer?.values ?? []).map((item) => `${before}${fieldFilter(word, item.value)}`));
      }
    }
    if (ticket === asked) show([...options, ...history]);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void update(), 150);
  });
  input.addEventListener('focus', () => void update());
  return list;
}
