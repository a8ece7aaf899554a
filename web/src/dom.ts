/** A DOM element with properties and children: the console's only view helper. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, unknown> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props) as HTMLElementTagNameMap[K];
  node.append(...children.filter((child): child is Node | string => child !== null && child !== undefined && child !== false));
  return node;
}

/** An element of the SVG namespace with attributes. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
): SVGElementTagNameMap[K] {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

/** A table of rows: `columns` name the headers and how to show each cell. */
export function table<R>(caption: string, columns: [string, (row: R) => unknown][], rows: R[]): HTMLTableElement {
  const cell = (value: unknown): string =>
    value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value as string);
  return el(
    'table',
    {},
    el('caption', { textContent: caption }),
    el('thead', {}, el('tr', {}, ...columns.map(([name]) => el('th', { scope: 'col', textContent: name })))),
    el('tbody', {}, ...rows.map((row) => el('tr', {}, ...columns.map(([, value]) => el('td', { textContent: cell(value(row)) }))))),
  );
}
