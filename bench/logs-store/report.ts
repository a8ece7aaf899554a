/** Prints the latest result per dialect and size from results.ndjson as Markdown tables. */
import { readFileSync } from 'node:fs';

interface Result {
  date: string;
  dialect: string;
  events: number;
  eventsPerSecond: number;
  ingestSeconds: number;
  storeBytes: number;
  ndjsonBytes: number;
  loadAverage?: number[];
  queriesOnly?: boolean;
  queries: { name: string; p50: number; p95: number }[];
  ripgrep: { name: string; ms: number; matches: number }[];
}

const results = readFileSync(new URL('./results.ndjson', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Result);
const latest = new Map<string, Result>();
for (const result of results) if (result.events >= 1_000_000) latest.set(`${result.dialect} ${result.events}`, result);
const runs = [...latest.values()].sort((a, b) => a.dialect.localeCompare(b.dialect) || a.events - b.events);
const label = (r: Result): string => `${r.dialect} ${r.events / 1e6}M`;
const mb = (bytes: number): string => `${Math.round(bytes / 1e6)} MB`;

console.log(`| run | ingest events/s | ingest time | store size | NDJSON size | load avg (before, after ingest, end) |`);
console.log(`|---|---|---|---|---|---|`);
// Ingest figures come from the latest full run of that dialect and size (not a --queries-only one).
for (const q of runs) {
  const r = results.filter((x) => x.dialect === q.dialect && x.events === q.events && !x.queriesOnly).at(-1) ?? q;
  console.log(
    `| ${label(r)} | ${r.eventsPerSecond.toLocaleString('en')} | ${r.ingestSeconds} s | ${mb(r.storeBytes)} | ${mb(r.ndjsonBytes)} | ${r.loadAverage?.join(', ') ?? ''} |`,
  );
}
console.log('');
console.log(
  `| query (p50 / p95 ms; load avg at the end of the run) | ${runs.map((r) => `${label(r)} (${r.loadAverage?.at(-1) ?? '?'})`).join(' | ')} |`,
);
console.log(`|---|${runs.map(() => '---').join('|')}|`);
for (const name of runs[0]?.queries.map((q) => q.name) ?? []) {
  console.log(
    `| ${name} | ${runs
      .map((r) => {
        const q = r.queries.find((x) => x.name === name);
        return q ? `${q.p50} / ${q.p95}` : '';
      })
      .join(' | ')} |`,
  );
}
for (const name of [...new Set(runs.flatMap((r) => r.ripgrep.map((x) => x.name)))]) {
  // A --queries-only run has no NDJSON: take ripgrep from the latest full run of that size.
  const rgOf = (r: Result) =>
    results
      .filter((x) => x.events === r.events && x.ripgrep.length > 0)
      .at(-1)
      ?.ripgrep.filter((y) => y.name === name)
      .at(-1);
  console.log(
    `| ripgrep \`${name}\` over the NDJSON (whole day) | ${runs
      .map((r) => {
        const x = rgOf(r);
        return x ? `${x.ms}` : '';
      })
      .join(' | ')} |`,
  );
}
