/**
 * The functions that cost the most in a V8 CPU profile (`node --cpu-prof`, as bulk-http.ts
 * `--cpu-prof DIR` writes): self time, and total time (self and what it called) for the top ones.
 *   node --import tsx bench/logs-store/profile-top.ts FILE.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const nameOf = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${lineNumber + 1}` : '';
    return `${functionName || '(anonymous)'} ${where}`.trim();
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  for (const [id, us] of selfUs) {
    all += us;
    const node = byId.get(id)!;
    self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + us);
    // Each function on the stack once (recursion counted once).
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = nameOf(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + us);
    }
  }
  const idle = (self.get('(idle)') ?? 0) + (self.get('(program)') ?? 0) * 0;
  const busy = all - idle;
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1)}%`.padStart(6);
  process.stdout.write(`\n${file}: ${(busy / 1000).toFixed(0)} ms busy (idle excluded), ${(all / 1000).toFixed(0)} ms sampled\n`);
  process.stdout.write('self:\n');
  for (const [name, us] of [...self]
    .filter(([name]) => name !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(values.top)))
    process.stdout.write(`  ${pct(us)}  ${name}\n`);
  process.stdout.write('total (self and callees):\n');
  for (const [name, us] of [...total]
    .filter(([name]) => name !== '(idle)' && name !== '(root)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(values.top)))
    process.stdout.write(`  ${pct(us)}  ${name}\n`);
}
