import { api } from '../api.js';
import type { FieldsResponse, FieldStatsBody, FieldStatsResponse, SearchBody } from '../api-types.js';
import { button, el } from '../dom.js';
import { problem } from '../feedback.js';
import { count, percent } from '../format.js';
import { words } from '../i18n.js';

/**
 * The fields sidebar: every field of the tenant's logs (a box narrows the list); a field opens to its
 * type, its coverage and its ten most frequent values among the matches of the current query and
 * range, with counts and share, each with a button to keep only that value (`field:"value"`) and
 * one to leave it out (`NOT field:"value"`). Past the service's sample (2,000 matches), those are of
 * the newest matches, and the summary says so.
 */
/** The share of the matches as a bar (CSSOM width: the CSP allows no style attributes). */
function shareBar(share: number): HTMLElement {
  const fill = el('span');
  fill.style.width = `${Math.round(share * 100)}%`;
  return el('span', { className: 'share', ariaHidden: 'true' }, fill);
}

export function fieldsSidebar(options: {
  search: () => Pick<SearchBody, 'query' | 'timeRange'>;
  /** The columns shown: a field not among them can be added. */
  columns: readonly string[];
  onColumn: (field: string) => void;
  onFilter: (field: string, value: string, exclude: boolean) => void;
}): HTMLElement {
  const t = words();
  const list = el('ul', { id: 'fields' });
  const narrow = el('input', { id: 'field-filter', type: 'search', autocomplete: 'off', placeholder: t.findField });
  let names: string[] = [];

  const fieldItem = (name: string) => {
    const values = el('ul', { className: 'values' });
    const summary = el('p', { className: 'field-summary muted' });
    const valueRow = ({ value, count: n, share }: FieldStatsResponse['values'][number]) =>
      el(
        'li',
        { className: 'value-row' },
        button(`${value} (${count(n)}, ${percent(share)})`, () => options.onFilter(name, value, false), {
          className: 'value',
          title: `${t.filterFor} ${name}: ${value}`,
        }),
        shareBar(share),
        button('−', () => options.onFilter(name, value, true), {
          className: 'exclude',
          ariaLabel: `${t.filterOut} ${name}: ${value}`,
          title: `${t.filterOut} ${name}: ${value}`,
        }),
      );
    const open = async () => {
      if (toggle.ariaExpanded === 'true') {
        toggle.ariaExpanded = 'false';
        values.replaceChildren();
        summary.textContent = '';
        return;
      }
      toggle.ariaExpanded = 'true';
      const body: FieldStatsBody = { ...options.search(), size: 10 };
      const stats = await api<FieldStatsResponse>(`/api/v1/logs/fields/${encodeURIComponent(name)}/stats`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
      // Type, and in how many of the entries counted the field is present (Kibana's "exists in"); past
      // the service's sample, what they were counted in: "Counted in the newest 2,000 of 1,234,567 entries".
      const sample =
        stats.sampled < stats.matched ? ` · ${t.fieldSampled} ${count(stats.sampled)} ${t.of} ${count(stats.matched)} ${t.total}` : '';
      summary.textContent = `${stats.type ?? '–'} · ${t.presentIn} ${count(stats.present)} / ${count(stats.sampled)} (${percent(stats.coverage)}) · ${count(stats.distinct)} ${t.distinctValues}${sample}`;
      values.replaceChildren(
        ...(stats.values.length ? stats.values.map(valueRow) : [el('li', { className: 'empty', textContent: t.none })]),
      );
    };
    const toggle = button(name, () => void open().catch((error: unknown) => values.replaceChildren(el('li', {}, problem(error)))), {
      className: 'field',
      ariaExpanded: 'false',
    });
    const addColumn = options.columns.includes(name)
      ? null
      : button('▥', () => options.onColumn(name), { className: 'add-column', ariaLabel: `${t.addColumn}: ${name}`, title: t.addColumn });
    const item = el('li', {}, el('span', { className: 'field-head' }, toggle, addColumn), summary, values);
    item.dataset.field = name;
    return item;
  };

  const draw = () => {
    const needle = narrow.value.trim().toLowerCase();
    list.replaceChildren(...names.filter((name) => name.toLowerCase().includes(needle)).map(fieldItem));
  };
  narrow.addEventListener('input', draw);

  void api<FieldsResponse>('/api/v1/logs/fields').then(
    ({ fields }) => {
      names = fields.map((field) => field.name).filter((name) => name !== '@timestamp' && name !== 'message');
      draw();
    },
    () => undefined,
  );
  return el(
    'aside',
    { className: 'fields', ariaLabelledBy: 'fields-title' },
    el('h2', { id: 'fields-title', textContent: t.fields }),
    el('label', { htmlFor: 'field-filter', className: 'visually-hidden', textContent: t.findField }),
    narrow,
    list,
  );
}
