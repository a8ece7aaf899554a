import { api } from '../api.js';
import type { PatternsBody, PatternsResponse, SearchBody } from '../api-types.js';
import { button, el } from '../dom.js';
import { problem } from '../feedback.js';
import { count, percent } from '../format.js';
import { words } from '../i18n.js';

/**
 * The search's message patterns (POST /api/v1/logs/patterns), read when the disclosure is opened:
 * each with its count and share, its variable parts marked, and a button that narrows the search to
 * it. When the service grouped a sample, the page says how large.
 */
export function patternsPanel(search: () => Pick<SearchBody, 'query' | 'timeRange'>, onFilter: (query: string) => void): HTMLElement {
  const t = words();
  const body = el('div', { id: 'patterns-body' });
  const details = el('details', { id: 'patterns', className: 'patterns' }, el('summary', { textContent: t.patterns }), body);
  let loaded = false;
  const patternText = (pattern: string) =>
    el(
      'code',
      {},
      ...pattern.split(/(<\*>)/).map((part) => (part === '<*>' ? el('span', { className: 'variable', textContent: '<*>' }) : part)),
    );
  const load = async () => {
    const request: PatternsBody = { ...search(), limit: 50 };
    const answer = await api<PatternsResponse>('/api/v1/logs/patterns', { method: 'POST', body: JSON.stringify(request) });
    const note =
      answer.sampled < answer.matched
        ? `${t.patternsSampled} ${count(answer.sampled)} / ${count(answer.matched)}${answer.matchedRelation === 'gte' ? '+' : ''}`
        : `${count(answer.sampled)} ${t.total}`;
    body.replaceChildren(
      el('p', { id: 'patterns-note', className: 'muted', textContent: note }),
      answer.patterns.length === 0
        ? el('p', { textContent: t.none })
        : el(
            'table',
            { id: 'patterns-table' },
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                el('th', { scope: 'col', textContent: t.colCount }),
                el('th', { scope: 'col', textContent: t.share }),
                el('th', { scope: 'col', textContent: t.pattern }),
                el('th', { scope: 'col', textContent: t.colFilter }),
              ),
            ),
            el(
              'tbody',
              {},
              ...answer.patterns.map((pattern) =>
                el(
                  'tr',
                  {},
                  el('td', { textContent: count(pattern.count) }),
                  el('td', { textContent: percent(pattern.share) }),
                  el('td', { title: pattern.example }, patternText(pattern.pattern)),
                  el(
                    'td',
                    {},
                    button(t.filterFor, () => onFilter(pattern.query), {
                      className: 'pattern-filter',
                      ariaLabel: `${t.filterFor}: ${pattern.pattern}`,
                    }),
                  ),
                ),
              ),
            ),
          ),
    );
  };
  details.addEventListener('toggle', () => {
    if (!details.open || loaded) return;
    loaded = true;
    body.textContent = '…';
    load().catch((error: unknown) => {
      loaded = false;
      body.replaceChildren(problem(error));
    });
  });
  return details;
}
