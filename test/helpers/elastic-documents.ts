/** Documents for the Elasticsearch-compatible API's tests: known counts per host, level, minute and latency. */

export const BASE = Date.UTC(2026, 10, 24, 10, 0, 0);
export const COUNT = 2_500;

export interface Doc {
  id: string;
  '@timestamp': string;
  message: string;
  level: string;
  host: string;
  latency: number;
  status: number;
}

/** 2,500 documents one second apart: 5 hosts, latency 0..99, every tenth a 500 at level error. */
export function documents(marker: string): Doc[] {
  return Array.from({ length: COUNT }, (_, i) => ({
    id: `${marker}-${i}`,
    '@timestamp': new Date(BASE + i * 1000).toISOString(),
    message: `request ${marker} number ${i}`,
    level: i % 10 === 0 ? 'error' : 'info',
    host: `h${i % 5}`,
    latency: i % 100,
    status: i % 10 === 0 ? 500 : 200,
  }));
}
