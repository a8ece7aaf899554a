/** The explore page's search as the URL holds it (`#/explore?q=…&range=1h` or `&from=…&to=…&live=1`). */

export const RANGES: Record<string, number> = {
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '6h': 21_600_000,
  '24h': 86_400_000,
  '7d': 604_800_000,
};

/** The absolute time range of the page's parameters (a relative range ends now). */
export function timeRange(params: URLSearchParams, now = Date.now()): { from: string; to: string } {
  const from = params.get('from');
  const to = params.get('to');
  if (from && to) return { from, to };
  const span = RANGES[params.get('range') ?? '1h'] ?? RANGES['1h']!;
  return { from: new Date(now - span).toISOString(), to: new Date(now).toISOString() };
}

/** `field:"value"` in the query language, quotes and backslashes escaped. */
export function fieldFilter(field: string, value: string): string {
  return `${field}:"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/** The query with one more condition: the field has the value, or (`exclude`) has not. */
export function withFilter(query: string, field: string, value: string, exclude = false): string {
  return [query.trim(), `${exclude ? 'NOT ' : ''}${fieldFilter(field, value)}`].filter(Boolean).join(' ');
}
