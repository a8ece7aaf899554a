// Runs generated requests against a service built in-process and checks the invariants of every
// answer: never a 5xx for a client's mistake (documented exceptions listed per service), every
// error in the service's documented shape, nothing changed by a refused request, and no success
// for an actor without the permission.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import { invalidRequest, type FuzzRequest, type Hints, type Operation, validRequest } from './openapi-arbitraries.js';
import { prototypeProblem } from '../helpers/prototypes.js';

export interface FuzzResponse {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
}

/** Who sends the request. */
export interface Actor {
  name: 'admin' | 'unpermitted' | 'anonymous';
  /** Credentials headers; re-issued when stale (a logout or a password change may end the session). */
  headers(): Promise<Record<string, string>>;
  /** Marks the credentials as possibly ended (after a successful state-changing request). */
  stale(): void;
  /** How many times it signed in (a sign-in changes sessions: snapshots are retaken after one). */
  readonly signIns: number;
}

export interface FuzzTarget {
  service: 'gateway' | 'logs';
  operations: Operation[];
  actors: Actor[];
  hints: Hints;
  send(request: FuzzRequest): Promise<FuzzResponse>;
  /** Row count and content hash of every table a refused request must leave alone. */
  snapshot(): Promise<Record<string, string>>;
  /** The error body's documented shape; a message when it is not. */
  errorShapeProblem(status: number, body: string): string | undefined;
  /** 5xx statuses an operation may answer by design (its service not configured, say). */
  allowed5xx: Readonly<Record<string, readonly number[]>>;
  /** Operations any signed-in user may call: a user without permissions may succeed there. */
  openToEveryone: ReadonlySet<string>;
  /** Extra request generators by operation id, for bodies the document does not describe (ingestion). */
  extraRequests?: Readonly<Record<string, fc.Arbitrary<FuzzRequest>>>;
  close(): Promise<void>;
}

export interface FuzzOptions {
  /** The run's seed (FUZZ_SEED); each operation gets its own from it (seedFor). */
  runSeed: number;
  numRuns: number;
}

/** Rows of every listed table, hashed: `{table: "rows:hash"}`. */
export async function snapshotTables(db: Kysely<any>, tables: readonly string[]): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const table of tables) {
    const rows = await db.selectFrom(table).selectAll().execute();
    const lines = rows
      .map((row) =>
        JSON.stringify(row, (_key, value: unknown) =>
          typeof value === 'bigint' ? value.toString() : Buffer.isBuffer(value) ? value.toString('hex') : value,
        ),
      )
      .sort();
    result[table] = `${rows.length}:${createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)}`;
  }
  return result;
}

function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys({ ...before, ...after }).filter((table) => before[table] !== after[table]);
}

/** Everything needed to replay a finding by hand. */
export function describeRequest(actor: Actor['name'], request: FuzzRequest): string {
  const payload =
    request.payload === undefined ? '' : typeof request.payload === 'string' ? request.payload : request.payload.toString('utf8');
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([k, v]) => [k, v.length > 200 ? `${v.slice(0, 200)}...(${v.length})` : v]),
  );
  return `${actor} ${request.method} ${request.url.length > 300 ? `${request.url.slice(0, 300)}...(${request.url.length})` : request.url}\n  mutation: ${request.mutation}\n  headers: ${JSON.stringify(headers)}\n  body: ${payload.length > 500 ? `${payload.slice(0, 500)}...(${payload.length})` : payload}`;
}

/** The invariants one answer must hold; the list of what it broke. */
export function problemsOf(
  target: FuzzTarget,
  op: Operation,
  actor: Actor,
  request: FuzzRequest,
  response: FuzzResponse,
  changed: string[],
): string[] {
  const problems: string[] = [];
  const status = response.statusCode;
  if (status >= 500 && !(target.allowed5xx[op.id] ?? []).includes(status)) problems.push(`status ${status} (a 5xx for a client's request)`);
  if (status >= 400) {
    const shape = target.errorShapeProblem(status, response.body);
    if (shape) problems.push(`error body not in the documented shape: ${shape}`);
    if (changed.length > 0) problems.push(`refused with ${status} but changed ${changed.join(', ')}`);
  }
  if (actor.name === 'unpermitted' && status < 300 && op.responses.includes('403') && !target.openToEveryone.has(op.id)) {
    problems.push(`a user without the permission got ${status}`);
  }
  if (actor.name === 'anonymous' && status < 300 && op.secured && !target.openToEveryone.has(op.id))
    problems.push(`an anonymous client got ${status}`);
  return problems;
}

/** One request through the invariants; throws with the replayable request when one breaks. */
export async function checkOne(
  target: FuzzTarget,
  op: Operation,
  actor: Actor,
  request: FuzzRequest,
  state: { before?: Record<string, string> },
): Promise<void> {
  const signIns = actor.signIns;
  const credentials = await actor.headers();
  if (actor.signIns !== signIns) state.before = undefined;
  const sent: FuzzRequest = { ...request, headers: { ...credentials, ...request.headers } };
  if ('authorization' in request.headers && request.headers.authorization === '') delete sent.headers.authorization;
  const before = state.before ?? (await target.snapshot());
  let response: FuzzResponse;
  try {
    response = await target.send(sent);
  } catch (error) {
    state.before = undefined;
    throw new Error(
      `${target.service}: ${op.id}: the request threw (a crash)\n${describeRequest(actor.name, sent)}\n${(error as Error).stack}`,
    );
  }
  const after = await target.snapshot();
  state.before = after;
  const changed = changedTables(before, after);
  const problems = problemsOf(target, op, actor, sent, response, changed);
  const polluted = prototypeProblem();
  if (polluted) problems.push(polluted);
  if (response.statusCode < 300 && op.method !== 'GET') {
    // A success may have ended the actor's session (logout, refresh, a password change).
    actor.stale();
    state.before = undefined;
  }
  if (problems.length > 0) {
    throw new Error(
      `${target.service}: ${op.id}: ${problems.join('; ')}\n${describeRequest(actor.name, sent)}\n  answer: ${response.statusCode} ${response.body.slice(0, 600)}`,
    );
  }
}

/** The request arbitrary of one operation: an actor, then a valid request or one mutation of it. */
export function requestsOf(target: FuzzTarget, op: Operation) {
  return fc.record({
    actor: fc.constantFrom(...target.actors),
    request: fc.oneof(
      { weight: 1, arbitrary: validRequest(op, target.hints) },
      { weight: 2, arbitrary: invalidRequest(op, target.hints) },
      ...(target.extraRequests?.[op.id] ? [{ weight: 2, arbitrary: target.extraRequests[op.id]! }] : []),
    ),
  });
}

/** Fuzzes one operation; on failure the error names the seed to replay it with (FUZZ_SEED). */
export async function fuzzOperation(target: FuzzTarget, op: Operation, options: FuzzOptions): Promise<void> {
  const state: { before?: Record<string, string> } = {};
  const seed = seedFor(options.runSeed, op);
  try {
    await fc.assert(
      fc.asyncProperty(requestsOf(target, op), async ({ actor, request }) => checkOne(target, op, actor, request, state)),
      // Shrinking would replay requests against a database the first run already changed.
      { seed, numRuns: options.numRuns, endOnFailure: true, includeErrorInReport: true },
    );
  } catch (error) {
    (error as Error).message =
      `${(error as Error).message}\nreplay: FUZZ_SEED=${options.runSeed} FUZZ_RUNS=${options.numRuns} FUZZ_ONLY='${op.id}'`;
    throw error;
  }
}

/** A stable per-operation seed from the run's seed, so one operation replays alone. */
export function seedFor(runSeed: number, op: Operation): number {
  return createHash('sha256').update(`${runSeed}:${op.id}`).digest().readInt32LE(0);
}

/** The run's seed: FUZZ_SEED, or a fixed one so `npm test` is repeatable. */
export function runSeed(fallback = 20261123): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${raw}`);
  return seed;
}

/** FUZZ_ONLY: a substring of operation ids (`POST /api/users`) to keep; unset keeps every one. */
export function selected(operations: Operation[]): Operation[] {
  const only = process.env.FUZZ_ONLY;
  return only ? operations.filter((op) => op.id.includes(only)) : operations;
}

/** An actor that signs in on demand and again after its session may have ended. */
export function actor(name: Actor['name'], signIn: () => Promise<Record<string, string>>): Actor {
  let current: Record<string, string> | undefined;
  let signIns = 0;
  return {
    name,
    get signIns() {
      return signIns;
    },
    async headers() {
      if (!current) {
        current = await signIn();
        signIns += 1;
      }
      return current;
    },
    stale() {
      current = undefined;
    },
  };
}
