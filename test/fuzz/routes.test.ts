import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { fuzzOperation, runSeed, selected, type FuzzTarget } from './fuzz-harness.js';
import { gatewayTarget, logsTarget } from './targets.js';

/**
 * Property-based fuzzing of every route of both services, from their own OpenAPI documents
 * (docs/testing.md): valid requests and mutations of them, as the administrator, as a user without
 * the permission and anonymously. Seeded, so `npm test` is repeatable; FUZZ_RUNS, FUZZ_SEED and
 * FUZZ_ONLY widen or narrow it (scripts/fuzz.mts is the long run).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = runSeed();

for (const dialect of DIALECTS) {
  for (const [service, build] of [
    ['gateway', gatewayTarget],
    ['logs', logsTarget],
  ] as const) {
    describe(`fuzz: every ${service} route [${dialect}]`, { timeout: 600_000 }, () => {
      let target: FuzzTarget;
      before(async () => {
        target = await build(dialect);
      });
      after(async () => target?.close());

      test('the document lists the routes (so a new route is fuzzed as soon as it is documented)', () => {
        assert.ok(target.operations.length > (service === 'gateway' ? 10 : 30), `${target.operations.length} operations`);
      });

      test('every operation holds the invariants', async () => {
        for (const op of selected(target.operations)) await fuzzOperation(target, op, { runSeed: SEED, numRuns: RUNS });
      });
    });
  }
}
