/**
 * Deterministic, realistic log events: one day of traffic from 20 services on 50 hosts, level mix
 * of a production system, messages from templates with variable parts, OTel-style attributes.
 */
import type { LogEntry } from '../../src/logs/modules/store/index.js';

export const DAY = 86_400_000;
/** 2026-11-20T00:00:00Z, the generated day. */
export const DAY_START = Date.UTC(2026, 10, 20);

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SERVICES = [
  'gateway',
  'auth',
  'users',
  'payroll',
  'finance',
  'permits',
  'reports',
  'files',
  'notify',
  'search',
  'staffing',
  'master-data',
  'public-order',
  'audit',
  'scheduler',
  'billing',
  'checkout',
  'inventory',
  'mailer',
  'export',
];
const ROUTES = [
  '/api/v1/pengguna',
  '/api/v1/auth/login',
  '/api/v1/finance/invoices',
  '/api/v1/permits/{id}',
  '/api/v1/files/upload',
  '/api/v1/reports/monthly',
  '/healthz',
  '/api/v1/staffing/assignments',
];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];
const LEVELS: [string, number][] = [
  ['info', 0.7],
  ['debug', 0.85],
  ['warn', 0.93],
  ['error', 0.99],
  ['fatal', 1],
];

type Template = (r: () => number, pick: <T>(list: readonly T[]) => T) => string;
const INFO: Template[] = [
  (r, pick) => `${pick(METHODS)} ${pick(ROUTES)} completed with status 200 in ${Math.floor(r() * 900)} ms`,
  (r) => `User u${Math.floor(r() * 50_000)} logged in from 10.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}`,
  (r) => `Processed batch of ${Math.floor(r() * 5000)} records for tenant dinas-${Math.floor(r() * 40)}`,
  (r) => `Cache refreshed: ${Math.floor(r() * 10_000)} keys loaded in ${Math.floor(r() * 300)} ms`,
  (r) => `Request accepted for order ORD-${Math.floor(r() * 1e7)} amount ${Math.floor(r() * 1e6)} IDR`,
  (r) => `Scheduled job report-${Math.floor(r() * 100)} started by scheduler`,
];
const DEBUG: Template[] = [
  (r) => `SQL query executed in ${Math.floor(r() * 50)} ms rows=${Math.floor(r() * 500)}`,
  (r, pick) => `Outgoing request to ${pick(SERVICES)} took ${Math.floor(r() * 120)} ms`,
  (r) => `Token verified for subject u${Math.floor(r() * 50_000)} from cache`,
];
const WARN: Template[] = [
  (r) => `Slow response from upstream after ${1000 + Math.floor(r() * 9000)} ms, retrying (attempt ${1 + Math.floor(r() * 3)})`,
  (r) => `Connection pool near capacity: ${80 + Math.floor(r() * 20)}% in use`,
  (r) => `Password for user u${Math.floor(r() * 50_000)} expires in ${Math.floor(r() * 14)} days`,
];
const ERROR: Template[] = [
  (r, pick) => `Connection timeout while calling ${pick(SERVICES)} after 30000 ms`,
  (r) => `Payment declined for order ORD-${Math.floor(r() * 1e7)}: insufficient funds`,
  () => `Disk usage above 95% on /var/lib/data`,
  (r) => `Failed to parse message at offset ${Math.floor(r() * 1e6)}: unexpected token`,
  (r, pick) => `Upstream ${pick(SERVICES)} returned 503 Service Unavailable`,
];

/** `count` events spread evenly over `days` days from DAY_START, in time order (as a shipper sends them). */
export function* generateEvents(count: number, seed = 42, days = 1): Generator<LogEntry> {
  const r = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const step = (days * DAY) / count;
  for (let i = 0; i < count; i += 1) {
    const x = r();
    const level = LEVELS.find(([, p]) => x < p)![0];
    const templates = level === 'info' ? INFO : level === 'debug' ? DEBUG : level === 'warn' ? WARN : ERROR;
    const service = SERVICES[Math.floor(r() * r() * SERVICES.length)]!; // skewed: a few busy services
    const host = `node-${String(Math.floor(r() * 50)).padStart(2, '0')}`;
    const traced = r() < 0.5;
    const entry: LogEntry = {
      timestamp: DAY_START + Math.floor(i * step),
      level,
      service,
      host,
      message: pick(templates)(r, pick),
      attributes: {
        'http.method': pick(METHODS),
        'http.route': pick(ROUTES),
        'http.status_code': level === 'error' || level === 'fatal' ? pick([500, 502, 503, 504]) : pick([200, 200, 200, 201, 204, 404]),
        'k8s.pod.name': `${service}-${Math.floor(r() * 4)}`,
        duration_ms: Math.floor(r() * 2000),
      },
    };
    if (traced) {
      entry.trace_id =
        Math.floor(r() * 2 ** 52)
          .toString(16)
          .padStart(16, '0') +
        Math.floor(r() * 2 ** 52)
          .toString(16)
          .padStart(16, '0');
      entry.span_id = Math.floor(r() * 2 ** 52)
        .toString(16)
        .padStart(16, '0');
    }
    yield entry;
  }
}
