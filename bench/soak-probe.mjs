// Loaded into every Node process of the system under the soak run (NODE_OPTIONS=--import): every
// SOAK_SAMPLE_MS it appends the process's resident memory, heap, open descriptors and event-loop
// delay to SOAK_PROBE_DIR/<pid>.ndjson. Outside the soak run nothing loads it.
import { appendFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.SOAK_PROBE_DIR;
// NODE_OPTIONS reaches worker threads too (the logs service's read pool): one sampler a process.
if (dir && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const file = join(dir, `${process.pid}.ndjson`);
  const role = process.argv.slice(2).join(' ') || process.argv[1];
  setInterval(
    () => {
      const memory = process.memoryUsage();
      const sample = {
        t: Date.now(),
        pid: process.pid,
        role,
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        fds: readdirSync('/proc/self/fd').length,
        eldP99Ms: delay.percentile(99) / 1e6,
        eldMaxMs: delay.max / 1e6,
      };
      delay.reset();
      appendFileSync(file, `${JSON.stringify(sample)}\n`);
    },
    Number(process.env.SOAK_SAMPLE_MS ?? 5_000),
  ).unref();
}
