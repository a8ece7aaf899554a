import { isPlainObject } from '../../../shared/text/storable-text.js';
import { dict } from '../../../shared/dict.js';
import { parsingError } from './elastic-errors.js';

/**
 * Elasticsearch's `filter_path` URL parameter, applied to a JSON answer: comma-separated paths of
 * dot-separated names, each name exact or with `*` wildcards (any characters within one name), `**`
 * for any number of names, and `-` before a path to remove what it matches. Arrays are crossed
 * without a name of their own (`items.*.error` reaches into each item). What the inclusive paths do
 * not reach is left out, and so is an object or array left with nothing: an answer nothing
 * matches is `{}`. Exclusions apply first, then the inclusive paths (as Elasticsearch does).
 * Logstash and Beats send `filter_path=errors,items.*.error,items.*.status` with every `_bulk`.
 */

/**
 * Bounds on what a client may send: paths in one parameter, names in one path and in all paths,
 * characters in all. Every node of the answer is matched against at most as many states as there
 * are names in all paths (states are kept once each), and the steps of one answer are counted.
 */
const MAX_PATHS = 32;
const MAX_NAMES = 32;
const MAX_TOTAL_NAMES = 128;
const MAX_CHARS = 4096;
/** Steps (a state following a name) one answer may take; past it a 400 rather than a busy service. */
const MAX_STEPS = 20_000_000;

type Segment = { kind: 'any-depth' } | { kind: 'exact'; name: string } | { kind: 'glob'; parts: string[] };

export interface FilterPath {
  include: Segment[][];
  exclude: Segment[][];
}

function segmentOf(name: string): Segment {
  if (name === '**') return { kind: 'any-depth' };
  if (!name.includes('*')) return { kind: 'exact', name };
  return { kind: 'glob', parts: name.split('*') };
}

/** The parsed parameter, or null when there is none (or it is empty): the answer goes out whole. */
export function parseFilterPath(value: unknown): FilterPath | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') throw parsingError('[filter_path] must be given once');
  if (value.length > MAX_CHARS) throw parsingError(`[filter_path] is longer than ${MAX_CHARS} characters`);
  const paths = value
    .split(',')
    .map((path) => path.trim())
    .filter((path) => path !== '' && path !== '-');
  if (paths.length === 0) return null;
  if (paths.length > MAX_PATHS) throw parsingError(`[filter_path] has more than ${MAX_PATHS} paths`);
  const filter: FilterPath = { include: [], exclude: [] };
  let total = 0;
  for (const path of paths) {
    const excluded = path.startsWith('-');
    const names = (excluded ? path.slice(1) : path).split('.');
    if (names.length > MAX_NAMES) throw parsingError(`a [filter_path] path has more than ${MAX_NAMES} names`);
    total += names.length;
    if (total > MAX_TOTAL_NAMES) throw parsingError(`[filter_path] has more than ${MAX_TOTAL_NAMES} names in all`);
    if (names.some((name) => name === '')) throw parsingError(`[filter_path] has an empty name in [${path.slice(0, 100)}]`);
    (excluded ? filter.exclude : filter.include).push(names.map(segmentOf));
  }
  return filter;
}

/** `*` wildcards within a name, matched without backtracking on the text: each part is found once, in order. */
function globMatches(parts: readonly string[], name: string): boolean {
  const first = parts[0]!;
  const last = parts.at(-1)!;
  if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (let i = 1; i < parts.length - 1; i += 1) {
    const found = name.indexOf(parts[i]!, at);
    if (found === -1 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}

/** A path being followed: the path, its place in the parameter, and the index of its next name. */
type State = { path: Segment[]; index: number; next: number };

/** Whether the path is matched whole: every name followed (a trailing `**` stands for none or more). */
const complete = ({ path, next }: State) => path.slice(next).every((segment) => segment.kind === 'any-depth');

/** The states after following the key `name` from `state`. */
function advance(state: State, name: string, out: Map<number, State>): void {
  const segment = state.path[state.next];
  if (segment === undefined) return;
  if (segment.kind === 'any-depth') {
    keep(state, out); // `**` takes this name and may take more
    advance({ path: state.path, index: state.index, next: state.next + 1 }, name, out); // or none
    return;
  }
  if (segment.kind === 'exact' ? segment.name === name : globMatches(segment.parts, name)) {
    keep({ path: state.path, index: state.index, next: state.next + 1 }, out);
  }
}

/** Each state once: `**.**` would otherwise reach the same state by many ways, and multiply them at every level. */
function keep(state: State, out: Map<number, State>): void {
  out.set(state.index * (MAX_NAMES + 1) + state.next, state);
}

/** The work left for one answer, in steps. */
type Budget = { steps: number };

function statesAfter(states: readonly State[], name: string, budget: Budget): State[] {
  budget.steps -= states.length;
  if (budget.steps < 0) throw parsingError('[filter_path] takes too much work on this answer: use fewer paths or fewer **');
  const out = new Map<number, State>();
  for (const state of states) advance(state, name, out);
  return [...out.values()];
}

/** What inclusive paths reach of `value`, or undefined when nothing. */
function kept(value: unknown, states: readonly State[], budget: Budget): unknown {
  if (states.some(complete)) return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => kept(item, states, budget)).filter((item) => item !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (!isPlainObject(value)) return undefined;
  const out = dict<unknown>();
  let any = false;
  for (const [name, child] of Object.entries(value)) {
    const next = statesAfter(states, name, budget);
    if (next.length === 0) continue;
    const result = kept(child, next, budget);
    if (result === undefined) continue;
    out[name] = result;
    any = true;
  }
  return any ? out : undefined;
}

/** `value` without what exclusive paths reach; undefined when they reach it whole. */
function withoutExcluded(value: unknown, states: readonly State[], budget: Budget): unknown {
  if (states.length === 0) return value;
  if (states.some(complete)) return undefined;
  if (Array.isArray(value)) return value.map((item) => withoutExcluded(item, states, budget)).filter((item) => item !== undefined);
  if (!isPlainObject(value)) return value;
  const out = dict<unknown>();
  for (const [name, child] of Object.entries(value)) {
    const result = withoutExcluded(child, statesAfter(states, name, budget), budget);
    if (result !== undefined) out[name] = result;
  }
  return out;
}

/** The answer as `filter_path` asks: `{}` when nothing of it is asked for. */
export function applyFilterPath(answer: unknown, filter: FilterPath): unknown {
  const start = (paths: Segment[][]): State[] => paths.map((path, index) => ({ path, index, next: 0 }));
  const budget = { steps: MAX_STEPS };
  let value = filter.exclude.length === 0 ? answer : withoutExcluded(answer, start(filter.exclude), budget);
  if (filter.include.length > 0) value = kept(value, start(filter.include), budget);
  return value ?? dict();
}
