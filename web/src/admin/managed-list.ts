import { button, confirmDialog, el, table, type Column } from '../dom.js';
import { into, problem } from '../feedback.js';
import { apiForm, type FieldSpec, type FormValues } from '../forms.js';
import { words } from '../i18n.js';

/**
 * A list the user manages through the API: the rows as a table with edit and delete on each, and a
 * form that creates one (or, after "edit", changes that one). The API's validation messages land at
 * the field they name (forms.ts); a refused delete shows the API's message above the table.
 */
export interface ManagedList<R> {
  /** `users`, `roles`, …: the ids of the section, its table and its form derive from it. */
  id: string;
  title: string;
  noun: string;
  rows: () => Promise<R[]>;
  columns: Column<R>[];
  name: (row: R) => string;
  /** The form's fields: for a new row (null), or to change `row`. */
  fields: (row: R | null) => FieldSpec[];
  values: (row: R) => FormValues;
  create: (values: FormValues) => Promise<unknown>;
  update?: (row: R, values: FormValues) => Promise<unknown>;
  remove?: (row: R) => Promise<unknown>;
  /** What removing is called here ("Revoke" for keys); "Delete" by default. */
  removeLabel?: string;
  /** What the status line says after it ("Revoked"); "Deleted" by default. */
  removedLabel?: string;
  /** Rows that cannot be changed (built-in roles, revoked keys) get no buttons, but this word. */
  fixed?: (row: R) => boolean;
  fixedLabel?: string;
  /** A word of the API's message -> the field it is about (forms.ts). */
  aliases?: Record<string, string>;
  /** Called with the answer of a create (API keys show their secret once). */
  created?: (answer: unknown) => Node | null;
}

export function managedList<R>(list: ManagedList<R>): HTMLElement {
  const t = words();
  const removeLabel = list.removeLabel ?? t.delete;
  const status = el('div', { id: `${list.id}-status`, className: 'status-line', role: 'status' });
  const tableSlot = el('div', { id: `${list.id}-list` });
  const formSlot = el('div', { id: `${list.id}-form-slot` });
  // The tab (or the page's heading) names the list; the table's caption says it again for screen readers.
  const section = el('section', { id: `${list.id}-section`, className: 'managed', ariaLabel: list.title }, status, tableSlot, formSlot);

  const say = (text: string, extra: Node | null = null) =>
    status.replaceChildren(el('p', { className: 'ok', textContent: text }), ...(extra ? [extra] : []));

  const refresh = () =>
    into(tableSlot, async () => {
      const rows = await list.rows();
      const columns: Column<R>[] = [...list.columns];
      if (list.update || list.remove)
        columns.push([
          t.colActions,
          (row) =>
            list.fixed?.(row)
              ? el('span', { className: 'muted', textContent: list.fixedLabel ?? t.builtin })
              : el(
                  'span',
                  { className: 'row-actions' },
                  list.update ? button(t.edit, () => showForm(row), { className: 'edit', ariaLabel: `${t.edit} ${list.name(row)}` }) : null,
                  list.remove
                    ? button(removeLabel, () => void remove(row), { className: 'delete', ariaLabel: `${removeLabel} ${list.name(row)}` })
                    : null,
                ),
        ]);
      const node = table(list.title, columns, rows, { id: `${list.id}-table` });
      rows.forEach((row, i) => node.tBodies[0]!.rows[i]!.setAttribute('data-name', list.name(row)));
      return node;
    });

  const remove = async (row: R) => {
    if (!(await confirmDialog(`${removeLabel} ${list.noun} "${list.name(row)}"?`, removeLabel, t.cancel))) return;
    try {
      await list.remove!(row);
      say(`${list.removedLabel ?? t.deleted}: ${list.name(row)}`);
      await refresh();
    } catch (error) {
      status.replaceChildren(problem(error));
    }
  };

  const showForm = (row: R | null) => {
    const cancel = row ? button(t.cancel, () => showForm(null), { id: `${list.id}-cancel` }) : null;
    const form = apiForm({
      id: `${list.id}-form`,
      legend: row ? `${t.edit} ${list.noun} "${list.name(row)}"` : `${t.create} ${list.noun}`,
      fields: list.fields(row),
      submit: row ? t.save : t.create,
      aliases: list.aliases,
      extra: cancel ? [cancel] : [],
      onSubmit: async (values) => {
        if (row) {
          await list.update!(row, values);
          say(`${t.saved}: ${list.name(row)}`);
        } else {
          const answer = await list.create(values);
          say(`${t.created}`, list.created?.(answer) ?? null);
        }
        showForm(null);
        await refresh();
      },
    });
    if (row) form.fill(list.values(row));
    formSlot.replaceChildren(form.node);
    if (row) form.node.querySelector<HTMLElement>('input:not([type=hidden]), select')?.focus();
  };

  showForm(null);
  void refresh();
  return section;
}
