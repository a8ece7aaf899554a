import type { LogEntry } from '../../src/logs/modules/store/index.js';

/**
 * The spikes' facets, numbered per field=value as the store numbers them (facets.ts): a token per
 * short string, boolean or whole number of level, service, host and the attributes; past 1,000
 * values a field is not faceted. `prefix` keeps the tokens apart from words where both share an index.
 */
export class SpikeFacets {
  readonly #numbers = new Map<string, number>();
  readonly #valuesPerField = new Map<string, number>();

  constructor(private readonly prefix: string) {}

  token(field: string, value: string | number | boolean): string | null {
    const key = `${field}\u0000${String(value)}`;
    let number = this.#numbers.get(key);
    if (number === undefined) {
      const count = this.#valuesPerField.get(field) ?? 0;
      if (count >= 1000) return null;
      this.#valuesPerField.set(field, count + 1);
      number = this.#numbers.size;
      this.#numbers.set(key, number);
    }
    return `${this.prefix}${number.toString(36)}`;
  }

  of(entry: LogEntry): string[] {
    const tokens: string[] = [];
    for (const [field, value] of [
      ['level', entry.level],
      ['service', entry.service],
      ['host', entry.host],
      ...Object.entries(entry.attributes ?? {}),
    ] as [string, unknown][]) {
      if (typeof value === 'string' ? value.length <= 64 : typeof value === 'boolean' || Number.isSafeInteger(value)) {
        const token = this.token(field, value as string);
        if (token) tokens.push(token);
      }
    }
    return tokens;
  }
}
