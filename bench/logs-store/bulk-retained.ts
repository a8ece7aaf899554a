/**
 * What a `_bulk` batch keeps alive on the event loop's heap while it waits for the writer: the bytes
 * per event held after parseBulk, and after the store's preparation of the entries.
 *   node --expose-gc --import tsx bench/logs-store/bulk-retained.ts [--events 5000]
 */
import { parseArgs } from 'node:util';
import { generateEvents } from './generate.js';
import { parseBulk } from '../../src/logs/modules/elastic/bulk.js';
import { prepareEntries } from '../../src/logs/modules/store/write-batch.js';
import type { LogEntry } from '../../src/logs/modules/store/log-store.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '5000' } } });
const events = Number(args.events);
const ecs = (entry: LogEntry) => {
  const a = entry.attributes!;
  return {
    '@timestamp': new Date(entry.timestamp).toISOString(),
    message: entry.message,
    log: { level: entry.level },
    service: { name: entry.service },
    host: { name: entry.host },
    ...(entry.trace_id ? { trace: { id: entry.trace_id }, span: { id: entry.span_id } } : {}),
    http: { request: { method: a['http.method'] }, route: a['http.route'], response: { status_code: a['http.status_code'] } },
    kubernetes: { pod: { name: a['k8s.pod.name'] } },
    event: { duration: a.duration_ms },
  };
};
const body = [...generateEvents(events, 42, 0.001)].map((e) => `{"create":{"_index":"logs"}}\n${JSON.stringify(ecs(e))}\n`).join('');
const gc = (globalThis as { gc?: () => void }).gc!;
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
for (let round = 0; round < 3; round += 1) {
  const start = heap();
  const parsed = parseBulk(body, 'logs', Date.now());
  const afterParse = heap();
  const prepared = prepareEntries(parsed.entries);
  const afterPrepare = heap();
  console.log(
    JSON.stringify({
      round,
      parseBytesAnEvent: Math.round((afterParse - start) / events),
      prepareBytesAnEvent: Math.round((afterPrepare - afterParse) / events),
      kept: parsed.items.length + prepared.length,
    }),
  );
}
