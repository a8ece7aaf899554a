/** The console's view helpers: plain DOM, no framework (docs/console.md says why). */

export type Child = Node | string | null | undefined | false;

/** A DOM element with properties and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props) as HTMLElementTagNameMap[K];
  node.append(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
  return node;
}

/** An element of the SVG namespace with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  ...children: (SVGElement | string)[]
): SVGElementTagNameMap[K] {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/** A button that runs `action` on click. */
export function button(label: string, action: () => void, props: Record<string, unknown> = {}): HTMLButtonElement {
  const node = el('button', { type: 'button', textContent: label, ...props });
  node.addEventListener('click', action);
  return node;
}

const cellText = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value as string);

export type Column<R> = [header: string, cell: (row: R) => unknown];

/** A table of rows: `columns` name the (translated) headers and what each cell shows (text or nodes). */
export function table<R>(caption: string, columns: Column<R>[], rows: R[], props: Record<string, unknown> = {}): HTMLTableElement {
  const cell = (value: unknown) => (value instanceof Node ? el('td', {}, value) : el('td', { textContent: cellText(value) }));
  return el(
    'table',
    props,
    el('caption', { textContent: caption }),
    el('thead', {}, el('tr', {}, ...columns.map(([name]) => el('th', { scope: 'col', textContent: name })))),
    el('tbody', {}, ...rows.map((row) => el('tr', {}, ...columns.map(([, value]) => cell(value(row)))))),
  );
}

/** Links to the views of one page (`#/<page>?view=<key>`), the current one marked. */
export function tabs(label: string, page: string, views: [key: string, label: string][], current: string): HTMLElement {
  return el(
    'nav',
    { className: 'tabs', ariaLabel: label },
    ...views.map(([key, text]) =>
      el('a', { href: `#/${page}?view=${key}`, id: `tab-${key}`, textContent: text, ariaCurrent: key === current ? 'page' : null }),
    ),
  );
}

/** A definition list of label/value pairs. */
export function facts(pairs: [string, Child][]): HTMLDListElement {
  return el('dl', { className: 'facts' }, ...pairs.flatMap(([term, value]) => [el('dt', { textContent: term }), el('dd', {}, value)]));
}

/** Asks a yes/no question in a modal <dialog> (keyboard- and screen-reader-friendly, unlike confirm()). */
export function confirmDialog(message: string, yes: string, no: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = el('dialog', { className: 'confirm', ariaLabel: message });
    let answer = false;
    const close = (yes: boolean) => {
      answer = yes;
      dialog.close();
    };
    // Escape closes a modal dialog too: every way out ends here.
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    dialog.append(
      el('p', { textContent: message }),
      el(
        'div',
        { className: 'actions' },
        button(yes, () => close(true), { id: 'confirm-yes' }),
        button(no, () => close(false)),
      ),
    );
    document.body.append(dialog);
    dialog.showModal();
  });
}
