import type { Static } from 'typebox';
import type * as schemas from '../../../src/logs/modules/patterns/patterns.schemas.js';
import { api } from '../api.js';
import { button, el, table } from '../dom.js';
import { into } from '../feedback.js';
import { count } from '../format.js';
import { language } from '../i18n.js';

type PatternsResponse = Static<typeof schemas.PatternsResponse>;
type Pattern = PatternsResponse['patterns'][number];
type PatternsBody = Static<typeof schemas.PatternsBody>;

const WORDS = {
  en: {
    patterns: 'Patterns',
    pattern: 'Pattern',
    count: 'Count',
    share: 'Share',
    example: 'Example',
    filter: 'Filter',
    none: 'No entries to group.',
    sampled: (size: string, total: string) => `Grouped a sample of ${size} of ${total} entries; counts are estimates.`,
    whole: (total: string) => `Grouped all ${total} entries.`,
  },
  id: {
    patterns: 'Pola',
    pattern: 'Pola',
    count: 'Jumlah',
    share: 'Porsi',
    example: 'Contoh',
    filter: 'Saring',
    none: 'Tidak ada entri untuk dikelompokkan.',
    sampled: (size: string, total: string) => `Mengelompokkan sampel ${size} dari ${total} entri; jumlah adalah perkiraan.`,
    whole: (total: string) => `Mengelompokkan semua ${total} entri.`,
  },
};

/**
 * The search's message patterns (POST /api/v1/logs/patterns), asked for when the panel is opened:
 * each with its (estimated) count, share and an example; "Filter" narrows the search to the pattern.
 * The answer says when it grouped a sample, and so does the panel.
 */
export function patternsPanel(options: {
  query: () => string;
  range: () => { from: string; to: string };
  onFilter: (query: string) => void;
}): HTMLElement {
  const w = WORDS[language()];
  const content = el('div', { id: 'patterns-content' });
  const panel = el('details', { id: 'patterns', className: 'patterns' }, el('summary', { textContent: w.patterns }), content);
  panel.addEventListener('toggle', () => {
    if (!panel.open) return;
    void into(content, async () => {
      const body: PatternsBody = { query: options.query(), timeRange: options.range() };
      const answer = await api<PatternsResponse>('/api/v1/logs/patterns', { method: 'POST', body: JSON.stringify(body) });
      const note = el('p', {
        id: 'patterns-note',
        role: 'status',
        textContent: answer.sampled ? w.sampled(count(answer.sample_size), count(answer.total)) : w.whole(count(answer.total)),
      });
      if (!answer.patterns.length) return el('div', {}, el('p', { textContent: w.none }));
      const rows = table<Pattern>(
        w.patterns,
        [
          [w.pattern, (p) => el('code', { className: 'pattern', textContent: p.pattern })],
          [w.count, (p) => count(answer.sampled ? p.estimated_count : p.count)],
          [w.share, (p) => `${(p.share * 100).toFixed(1)}%`],
          [w.example, (p) => el('span', { className: 'example', textContent: p.example.message })],
          [
            w.filter,
            (p) =>
              button(w.filter, () => options.onFilter(p.query), { className: 'filter-pattern', ariaLabel: `${w.filter}: ${p.pattern}` }),
          ],
        ],
        answer.patterns,
        { id: 'patterns-table' },
      );
      return el('div', {}, note, rows);
    });
  });
  return panel;
}
