import { ApiError } from './api.js';
import { el } from './dom.js';
import { problem } from './feedback.js';

/**
 * Forms that send to the API and show its validation message at the field it names. The API says
 * which field in `detail` ("body/email must match format", "password: …", "username \"x\" already
 * exists", "unknown role \"x\"", "condition.threshold is required"); a form maps the rest with
 * `aliases` (a word of the message -> a field).
 */

export interface FieldSpec {
  /** The API's name of the field. */
  name: string;
  label: string;
  type?: 'text' | 'password' | 'email' | 'number' | 'datetime-local' | 'select' | 'checkboxes';
  options?: [value: string, label: string][];
  value?: string | string[];
  required?: boolean;
  autocomplete?: string;
  hint?: string;
}

export type FormValues = Record<string, string | string[]>;

/** The field a validation message is about, or undefined when it names none of them. */
export function fieldOfDetail(detail: string, names: string[], aliases: Record<string, string> = {}): string | undefined {
  const cleaned = detail.replace(/^(body|querystring|params)\//, '');
  const lead = /^[\w.]+/.exec(cleaned)?.[0];
  if (lead) {
    const top = lead.split(/[./]/)[0]!;
    if (names.includes(lead)) return lead;
    if (names.includes(top)) return top;
  }
  for (const [word, field] of Object.entries(aliases)) if (new RegExp(`\\b${word}\\b`, 'i').test(cleaned)) return field;
  return undefined;
}

export interface ApiForm {
  node: HTMLFormElement;
  /** Puts values in (e.g. a row to edit); fields not named are emptied. */
  fill(values: FormValues): void;
  reset(): void;
}

export function apiForm(options: {
  id: string;
  legend: string;
  fields: FieldSpec[];
  submit: string;
  onSubmit: (values: FormValues) => Promise<void>;
  aliases?: Record<string, string>;
  extra?: Node[];
}): ApiForm {
  const { id } = options;
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement | HTMLInputElement[]>();
  const errors = new Map<string, HTMLElement>();
  const controlId = (name: string) => `${id}-${name.replace(/[^\w-]/g, '_')}`;

  const rows = options.fields.map((spec) => {
    const errorNode = el('p', { className: 'field-error', id: `${controlId(spec.name)}-error` });
    errors.set(spec.name, errorNode);
    const hint = spec.hint ? el('p', { className: 'hint', id: `${controlId(spec.name)}-hint`, textContent: spec.hint }) : null;
    if (spec.type === 'checkboxes') {
      const boxes = (spec.options ?? []).map(([value, label]) => {
        const box = el('input', {
          type: 'checkbox',
          value,
          id: `${controlId(spec.name)}-${value.replace(/[^\w-]/g, '_')}`,
          name: spec.name,
        });
        return [box, el('label', { className: 'check' }, box, ` ${label}`)] as const;
      });
      inputs.set(
        spec.name,
        boxes.map(([box]) => box),
      );
      return el(
        'fieldset',
        { className: 'field checkboxes', id: controlId(spec.name) },
        el('legend', { textContent: spec.label }),
        ...boxes.map(([, label]) => label),
        hint,
        errorNode,
      );
    }
    const control =
      spec.type === 'select'
        ? el(
            'select',
            { id: controlId(spec.name), name: spec.name },
            ...(spec.options ?? []).map(([value, label]) => el('option', { value, textContent: label })),
          )
        : el('input', {
            id: controlId(spec.name),
            name: spec.name,
            type: spec.type ?? 'text',
            required: spec.required ?? false,
            autocomplete: spec.autocomplete ?? 'off',
          });
    if (hint) control.setAttribute('aria-describedby', hint.id);
    inputs.set(spec.name, control);
    return el('div', { className: 'field' }, el('label', { htmlFor: control.id, textContent: spec.label }), control, hint, errorNode);
  });

  const general = el('div', { className: 'form-error', id: `${id}-error` });
  const submit = el('button', { type: 'submit', textContent: options.submit, id: `${id}-submit` });
  const node = el(
    'form',
    { id, className: 'api-form', noValidate: true },
    el('fieldset', {}, el('legend', { textContent: options.legend }), ...rows),
    el('div', { className: 'actions' }, submit, ...(options.extra ?? [])),
    general,
  );

  const values = (): FormValues =>
    Object.fromEntries(
      [...inputs].map(([name, input]) => [
        name,
        Array.isArray(input) ? input.filter((box) => box.checked).map((box) => box.value) : input.value,
      ]),
    );

  const clearErrors = () => {
    general.replaceChildren();
    for (const spec of options.fields) {
      errors.get(spec.name)!.textContent = '';
      const input = inputs.get(spec.name);
      const first = Array.isArray(input) ? input[0] : input;
      if (!first) continue;
      first.removeAttribute('aria-invalid');
      // Back to the field's hint, if it has one.
      if (spec.hint) first.setAttribute('aria-describedby', `${controlId(spec.name)}-hint`);
      else first.removeAttribute('aria-describedby');
    }
  };

  const showError = (error: unknown) => {
    if (error instanceof ApiError && error.status === 400 && typeof error.body.detail === 'string') {
      const field = fieldOfDetail(
        error.body.detail,
        options.fields.map((f) => f.name),
        options.aliases,
      );
      const input = field ? inputs.get(field) : undefined;
      if (field && input) {
        const errorNode = errors.get(field)!;
        errorNode.textContent = error.body.detail;
        const first = Array.isArray(input) ? input[0] : input;
        if (first) {
          first.setAttribute('aria-invalid', 'true');
          first.setAttribute('aria-describedby', errorNode.id);
          first.focus();
        }
        return;
      }
    }
    general.replaceChildren(problem(error));
  };

  node.addEventListener('submit', (event) => {
    event.preventDefault();
    clearErrors();
    submit.disabled = true;
    options
      .onSubmit(values())
      .catch(showError)
      .finally(() => (submit.disabled = false));
  });

  const fill = (next: FormValues) => {
    clearErrors();
    for (const spec of options.fields) {
      const input = inputs.get(spec.name)!;
      const value = next[spec.name] ?? spec.value ?? (spec.type === 'checkboxes' ? [] : '');
      if (Array.isArray(input)) for (const box of input) box.checked = (Array.isArray(value) ? value : [value]).includes(box.value);
      else input.value = Array.isArray(value) ? value.join(',') : value;
    }
  };
  fill({});
  return { node, fill, reset: () => fill({}) };
}
