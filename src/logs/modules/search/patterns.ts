/**
 * Message patterns, Drain-style (He et al., "Drain: An Online Log Parsing Approach with Fixed Depth
 * Tree", ICWS 2017): messages are split into tokens; tokens with digits (numbers, ids, addresses,
 * durations) are variables from the start; a message joins the most similar pattern of the same
 * token count and first token when at least half of its tokens agree, and the tokens that differ
 * become variables (`<*>`). One pass, bounded work per message: fast enough for a sample of tens of
 * thousands of entries.
 */

export const VARIABLE = '<*>';
/** Share of equal tokens for a message to join a pattern (Drain's similarity threshold). */
const SIMILARITY = 0.5;
/** Patterns compared per (length, first token) group: a bound on the work per message. */
const MAX_PER_GROUP = 100;
/** Tokens of a message considered (a very long message's tail is one variable). */
const MAX_TOKENS = 64;

export interface Pattern {
  tokens: string[];
  count: number;
  /** The first message that made it. */
  example: string;
}

function tokensOf(message: string): string[] {
  const tokens = message.split(/\s+/).filter((token) => token !== '');
  const masked = tokens.slice(0, MAX_TOKENS).map((token) => (/\d/.test(token) ? VARIABLE : token));
  if (tokens.length > MAX_TOKENS) masked.push(VARIABLE);
  return masked;
}

function similarity(template: readonly string[], tokens: readonly string[]): number {
  let same = 0;
  for (let i = 0; i < tokens.length; i += 1) if (template[i] === tokens[i] || template[i] === VARIABLE) same += 1;
  return tokens.length === 0 ? 1 : same / tokens.length;
}

/** Groups messages into patterns; most frequent first (ties by pattern text). */
export function messagePatterns(messages: Iterable<string>): Pattern[] {
  const groups = new Map<string, Pattern[]>();
  for (const message of messages) {
    const tokens = tokensOf(message);
    const key = `${tokens.length}\u0000${tokens[0] ?? ''}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    let best: Pattern | undefined;
    let bestScore = -1;
    for (const pattern of group) {
      const score = similarity(pattern.tokens, tokens);
      if (score > bestScore) [best, bestScore] = [pattern, score];
    }
    if (best && bestScore >= SIMILARITY) {
      best.count += 1;
      for (let i = 0; i < tokens.length; i += 1) if (best.tokens[i] !== tokens[i]) best.tokens[i] = VARIABLE;
    } else if (group.length < MAX_PER_GROUP) group.push({ tokens, count: 1, example: message });
    else {
      // A crowded group: the message joins its closest pattern anyway (its differences become variables).
      const closest = best!;
      closest.count += 1;
      for (let i = 0; i < tokens.length; i += 1) if (closest.tokens[i] !== tokens[i]) closest.tokens[i] = VARIABLE;
    }
  }
  return [...groups.values()].flat().sort((a, b) => b.count - a.count || (a.tokens.join(' ') < b.tokens.join(' ') ? -1 : 1));
}

/** A query that finds a pattern's messages: its runs of fixed tokens as quoted phrases. */
export function patternQuery(tokens: readonly string[]): string {
  const runs: string[][] = [[]];
  for (const token of tokens) {
    if (token === VARIABLE) runs.push([]);
    else runs.at(-1)!.push(token);
  }
  return runs
    .filter((run) => run.length > 0)
    .map((run) => `"${run.join(' ').replace(/[\\"]/g, (char) => `\\${char}`)}"`)
    .join(' ');
}
