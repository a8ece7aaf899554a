import { api } from '../api.js';
import type { DistinctResponse, FieldsResponse } from '../api-types.js';
import { button, el } from '../dom.js';
import { problem } from '../feedback.js';
import { count } from '../format.js';
import { words } from '../i18n.js';

/**
 * The fields sidebar: every field of the tenant's logs (a box narrows the list); a field opens to its
 * ten most frequent values in the range with their counts, each with a button to keep only that value
 * (`field:"value"`) and one to leave it out (`NOT field:"value"`).
 */
export function fieldsSidebar(options: {
  range: () => { from: string; to: string };
  onFilter: (field: string, value: string, exclude: boolean) => void;
}): HTMLElement {
  const t = words();
  const list = el('ul', { id: 'fields' });
  const narrow = el('input', { id: 'field-filter', type: 'search', autocomplete: 'off', placeholder: t.findField });
  let names: string[] = [];

  const fieldItem = (name: string) => {
    const values = el('ul', { className: 'values' });
    const valueRow = ({ value, count: n }: { value: string; count: number }) =>
      el(
        'li',
        { className: 'value-row' },
        button(`${value} (${count(n)})`, () => options.onFilter(name, value, false), {
          className: 'value',
          title: `${t.filterFor} ${name}: ${value}`,
        }),
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
        return;
      }
      toggle.ariaExpanded = 'true';
      const query = new URLSearchParams({ limit: '10', ...options.range() });
      const { values: top } = await api<DistinctResponse>(`/api/v1/logs/fields/${encodeURIComponent(name)}/distinct?${query.toString()}`);
      values.replaceChildren(...(top.length ? top.map(valueRow) : [el('li', { className: 'empty', textContent: t.none })]));
    };
    const toggle = button(name, () => void open().catch((error: unknown) => values.replaceChildren(el('li', {}, problem(error)))), {
      className: 'field',
      ariaExpanded: 'false',
    });
    return el('li', {}, toggle, values);
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
