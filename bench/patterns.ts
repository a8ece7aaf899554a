// The patterns route over a large range: N entries (PATTERNS_BENCH_ENTRIES, default 1,000,000) of a
// dozen message shapes shipped through the bulk API into a fresh SQLite (or PATTERNS_BENCH_DIALECT=
// postgres with TEST_POSTGRES_URL) logs service in this process, then POST /api/v1/logs/patterns over
// the whole range a few times. Prints the CPU time (user+system, this process) and wall time of each
// call: CPU is the figure to compare on a shared machine.
//   node --import tsx bench/patterns.ts
import { startTestLogs } from '../test/helpers/logs.js';

const N = Number(process.env.PATTERNS_BENCH_ENTRIES ?? 1_000_000);
const dialect = process.env.PATTERNS_BENCH_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
const SPAN_MS = 3_600_000;
const start = Math.floor(Date.now() / SPAN_MS) * SPAN_MS - 2 * SPAN_MS;
const shapes = [
  (i: number) => `user u${i % 9973}x logged in from 10.${i % 250}.${i % 199}.${i % 97}`,
  (i: number) =>
    `payment ${i.toString(16).padStart(8, '0')}-1b2c-4d5e-8f90-${(i * 31).toString(16).padStart(12, '0')} failed after ${i % 5000}ms`,
  (i: number) => `cache miss for key order-${i}`,
  (i: number) => `GET /api/v1/orders/${i} 200 ${i % 300}ms`,
  (i: number) => `POST /api/v1/payments 502 upstream timeout after ${i % 30}s`,
  (i: number) => `worker ${i % 16} picked job ${i} from queue emails`,
  (i: number) => `connection reset by peer 172.16.${i % 200}.${i % 100}:${1024 + (i % 60000)}`,
  (i: number) => `disk usage at ${i % 100}% on /var/lib/data`,
  (i: number) => `retrying request ${i} attempt ${i % 5} of 5`,
  (i: number) => `session ${(i * 2654435761) % 4294967296} expired for tenant t${i % 40}`,
  (i: number) => `slow query took ${i % 9000}ms: SELECT * FROM orders WHERE id = ${i}`,
  (i: number) => `health check ok`,
];

const logs = await startTestLogs(dialect);
try {
  const headers = await logs.admin();
  const CHUNK = 5000;
  const shipStart = Date.now();
  for (let base = 0; base < N; base += CHUNK) {
    const lines: string[] = [];
    for (let i = base; i < Math.min(N, base + CHUNK); i++) {
      const doc = {
        '@timestamp': new Date(start + Math.floor((i / N) * SPAN_MS)).toISOString(),
        message: shapes[i % shapes.length]!(i),
        service: 'bench',
      };
      lines.push('{"index":{}}', JSON.stringify(doc));
    }
    const answer = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: `${lines.join('\n')}\n` });
    if (answer.statusCode !== 200 || answer.json().errors) throw new Error(`bulk failed: ${answer.statusCode}`);
  }
  console.log(`shipped ${N} entries in ${((Date.now() - shipStart) / 1000).toFixed(1)} s (${dialect})`);
  const timeRange = { from: new Date(start).toISOString(), to: new Date(start + SPAN_MS).toISOString() };
  for (let run = 0; run < 5; run++) {
    const cpu = process.cpuUsage();
    const wall = process.hrtime.bigint();
    const answer = await logs.request({
      method: 'POST',
      url: '/api/v1/logs/patterns',
      headers: await logs.admin(),
      payload: { timeRange },
    });
    const used = process.cpuUsage(cpu);
    const body = answer.json();
    console.log(
      `run ${run + 1}: ${answer.statusCode} cpu ${((used.user + used.system) / 1000).toFixed(0)} ms, wall ${(Number(process.hrtime.bigint() - wall) / 1e6).toFixed(0)} ms; total ${body.total}, sampled ${body.sampled} (${body.sample_size}), ${body.clusters} patterns`,
    );
  }
} finally {
  await logs.close();
}
