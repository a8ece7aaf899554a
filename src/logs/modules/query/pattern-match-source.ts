/**
 * The matcher of patterns.ts's programs, as the SQLite function `gerbang_match(program, value)`
 * (1, 0, or NULL for a NULL value). JavaScript source, because SQLite's worker threads run no
 * TypeScript (worker-source.ts includes it); `patternMatch` below runs the same code on the event
 * loop's connection. A regular expression runs as a Thompson automaton over the value's code
 * points (time linear in the value's length times the program's states: no backtracking); a fuzzy
 * term as a distance bounded by its edits (insert, delete,
 * substitute one character or swap two adjacent ones: the optimal string alignment distance). On a message (`tok`), one of its words
 * must match: the words as tokenize.ts finds them (the same rule, repeated here for the thread).
 */
export const PATTERN_MATCH_SOURCE = String.raw`
const gerbangPrograms = new Map();
function gerbangWords(text) {
  const ascii = /^[\x00-\x7f]*$/.test(text);
  const source = (ascii ? text : text.normalize('NFKD').replace(/\p{M}+/gu, '')).toLowerCase();
  const found = source.match(ascii ? /[a-z0-9]+/g : /[\p{L}\p{N}]+/gu) || [];
  const tokens = found.length > 16383 ? found.slice(0, 16383) : found;
  return tokens.some((token) => token.length > 200) ? tokens.filter((token) => token.length <= 200) : tokens;
}
function gerbangRegex(program, text) {
  const states = program.s;
  const sets = program.c;
  const count = states.length / 3;
  const marks = new Int32Array(count).fill(-1);
  let current = [];
  let step = 0;
  const stack = [];
  const add = (list, state) => {
    stack.push(state);
    while (stack.length > 0) {
      const s = stack.pop();
      if (marks[s] === step) continue;
      marks[s] = step;
      const op = states[s * 3];
      if (op === 1) {
        stack.push(states[s * 3 + 2], states[s * 3 + 1]);
      } else if (op === 3) {
        stack.push(states[s * 3 + 1]);
      } else list.push(s);
    }
  };
  add(current, program.st);
  for (const char of text) {
    if (current.length === 0) return false;
    const code = char.codePointAt(0);
    step += 1;
    const next = [];
    for (const s of current) {
      if (states[s * 3] !== 0) continue;
      const set = sets[states[s * 3 + 1]];
      const ranges = set[1];
      let inside = false;
      for (let r = 0; r < ranges.length; r += 2) {
        if (code >= ranges[r] && code <= ranges[r + 1]) {
          inside = true;
          break;
        }
      }
      if (inside !== (set[0] === 1)) add(next, states[s * 3 + 2]);
    }
    current = next;
  }
  return current.some((s) => states[s * 3] === 2);
}
function gerbangFuzzy(term, edits, text) {
  const a = [...term];
  const b = [...text];
  if (Math.abs(a.length - b.length) > edits) return false;
  let before = null;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j += 1) {
      let value = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2] + 1);
      row.push(value);
      if (value < best) best = value;
    }
    if (best > edits) return false;
    before = previous;
    previous = row;
  }
  return previous[b.length] <= edits;
}
function gerbangMatch(text, value) {
  if (value === null || value === undefined) return null;
  let program = gerbangPrograms.get(text);
  if (program === undefined) {
    program = JSON.parse(text);
    if (gerbangPrograms.size >= 64) gerbangPrograms.clear();
    gerbangPrograms.set(text, program);
  }
  const test = program.f !== undefined ? (word) => gerbangFuzzy(program.f, program.k, word) : (word) => gerbangRegex(program, word);
  const subject = String(value);
  return (program.tok === 1 ? gerbangWords(subject).some(test) : test(subject)) ? 1 : 0;
}
`;

type PatternMatch = (program: string, value: unknown) => 0 | 1 | null;

// eslint-disable-next-line @typescript-eslint/no-implied-eval -- our own constant source, so that one matcher serves the threads and the event loop
export const patternMatch = (new Function(`${PATTERN_MATCH_SOURCE}\nreturn gerbangMatch;`) as () => PatternMatch)();

/** The SQLite function's name and options: deterministic, so SQLite may evaluate it once per row and value. */
export const PATTERN_FUNCTION = 'gerbang_match';
