/**
 * The 20 queries the console benchmarks ask of their 10M-event store (bench/console-interactions.ts,
 * bench/logs-store/console-reads.ts): words, phrases, levels, a negation, hosts, a prefix, an
 * attribute, common and rare, so that no cache answers them all.
 */
export const CONSOLE_QUERIES = [
  'declined',
  'level:error',
  'service:payroll',
  '"Connection timeout"',
  'host:node-07',
  'timeout AND service:gateway',
  'Cache refreshed',
  'level:warn pool',
  'NOT level:info',
  'http.route:"/healthz"',
  'service:finance level:error',
  'u1234*',
  'Disk usage',
  'upstream 503',
  'scheduler',
  'level:fatal',
  'service:checkout',
  'insufficient funds',
  'host:node-42 level:debug',
  'logged in',
];
