// Manual check that audit exports stream with flat memory: inserts N audit rows into a fresh SQLite
// database, downloads the CSV and XLSX exports through a slow reader and prints the heap peak.
// Usage: node --expose-gc --import tsx scripts/audit-export-memory.mts 300000
// What it printed: docs/performance-notes.md, "Audit export".
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { startTestLogs } from '../test/helpers/logs.js';

const logs = await startTestLogs('sqlite');
const headers = await logs.admin();
const N = Number(process.argv[2] ?? 300000);
const base = Date.parse('2026-01-01T00:00:00Z');
for (let i = 0; i < N; i += 2000) {
  const rows = Array.from({ length: Math.min(2000, N - i) }, (_, j) => ({
    id: randomUUID(),
    tenant_id: 'default',
    at: new Date(base + (i + j) * 1000).toISOString(),
    actor_id: null,
    actor: `actor-${j % 50}`,
    action: 'bulk.event',
    target_type: 'user',
    target_id: randomUUID(),
    outcome: 'success' as const,
    ip: '10.1.2.3',
    user_agent: 'Mozilla/5.0 something long enough to matter',
    request_id: randomUUID(),
    details: JSON.stringify({ k: 'v'.repeat(40) }),
  }));
  await logs.database.db.insertInto('logs_audit').values(rows).execute();
}
await logs.app.listen({ host: '127.0.0.1', port: 0 });
const port = (logs.app.server.address() as { port: number }).port;
for (const kind of ['csv', 'excel']) {
  global.gc?.();
  const start = process.memoryUsage().heapUsed;
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${port}/api/v1/log-audit/export/${kind}`, { headers }, (res) => {
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          res.pause();
          setTimeout(() => res.resume(), 0);
        });
        res.on('end', () => resolve());
        res.on('error', reject);
      })
      .on('error', reject);
  });
  clearInterval(timer);
  console.log(kind, N, 'bytes', bytes, 'heap start MB', (start / 1e6).toFixed(1), 'peak MB', (peak / 1e6).toFixed(1));
}
await logs.close();
