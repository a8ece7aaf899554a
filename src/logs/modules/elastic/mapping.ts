import type { FieldInfo } from '../store/log-store.js';
import { dict, type Dict } from '../../../shared/dict.js';

/** Elasticsearch's type of one of our fields: every text field but the message is an exact keyword. */
export function elasticType(field: FieldInfo): string {
  if (field.name === 'message') return 'text';
  switch (field.type) {
    case 'date':
      return 'date';
    case 'number':
      return 'double';
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'keyword';
  }
}

type Properties = Dict<{ type?: string; properties?: Properties }>;

/**
 * `GET /<index>/_mapping`: dotted attribute names as nested `properties`, as Elasticsearch maps
 * objects. A name that is both a value and an object (`http` and `http.method`) keeps the object.
 */
export function mappingOf(fields: readonly FieldInfo[]): { properties: Properties } {
  const root: Properties = dict();
  const sorted = [...fields].sort((a, b) => b.name.split('.').length - a.name.split('.').length);
  for (const field of sorted) {
    const parts = field.name.split('.');
    let level = root;
    parts.forEach((part, index) => {
      if (index === parts.length - 1) {
        level[part] ??= { type: elasticType(field) };
        return;
      }
      const node = (level[part] ??= { properties: dict() });
      node.properties ??= dict();
      delete node.type;
      level = node.properties;
    });
  }
  return { properties: root };
}

/** `_field_caps`: every field whose name matches one of the patterns (`*`, `prefix*`, exact). */
export function fieldCapsOf(fields: readonly FieldInfo[], patterns: readonly string[]) {
  const wanted = (name: string) =>
    patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
  return dict(
    fields
      .filter((field) => wanted(field.name))
      .map((field): [string, object] => {
        const type = elasticType(field);
        return [field.name, { [type]: { type, metadata_field: false, searchable: true, aggregatable: type !== 'text' } }];
      }),
  );
}
