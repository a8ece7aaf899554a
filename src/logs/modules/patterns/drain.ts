/**
 * Message patterns by the Drain algorithm (He et al., "Drain: An Online Log Parsing Approach with
 * Fixed Depth Tree", ICWS 2017), as Loki and Drain3 use it: a message's variable parts are masked
 * first (UUIDs, IP addresses, hex ids, numbers), it is split into tokens, and a parse tree of fixed
 * depth leads to a few candidate groups: first by token count, then by the leading tokens (a token
 * with a digit goes down the `<*>` branch, as does any token past a node's child limit). The
 * candidate whose template shares the most tokens, at least `similarity` of them, takes the message
 * and its differing positions become `<*>`; else the message starts a group of its own.
 */

export const WILDCARD = '<*>';

export interface DrainOptions {
  /** Tree depth as Drain3 counts it (root, length, leading tokens, leaf): depth 4 = 1 leading token. */
  depth: number;
  /** Share of a template's tokens that must equal the message's (0–1). */
  similarity: number;
  /** Children per tree node before the rest go down `<*>`. */
  maxChildren: number;
  /** Groups in all: past this, a message that matches none is counted as unmatched. */
  maxClusters: number;
}

export const DEFAULT_DRAIN: DrainOptions = { depth: 4, similarity: 0.4, maxChildren: 100, maxClusters: 5000 };

/** Tokens longer than this are cut (a pattern over megabyte-long messages stays small). */
const MAX_TOKENS = 200;

// Order matters: a UUID holds hex and digits, an IP address holds numbers.
const MASKS: RegExp[] = [
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g,
  /\b(?:[0-9a-f]{1,4}:){2,7}[0-9a-f]{1,4}\b/gi,
  /\b0x[0-9a-f]+\b/gi,
  /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi,
  /(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:ms|s|m|h|d|b|kb|mb|gb|%)?(?![\w.])/gi,
];

/** The message with its variable parts masked, as tokens. */
export function tokensOf(message: string): string[] {
  let text = message.length > 10_000 ? message.slice(0, 10_000) : message;
  for (const mask of MASKS) text = text.replace(mask, WILDCARD);
  const tokens = text.split(/\s+/).filter(Boolean);
  return tokens.length > MAX_TOKENS ? tokens.slice(0, MAX_TOKENS) : tokens;
}

export interface Cluster {
  id: number;
  template: string[];
  count: number;
  /** The first message the group took (an example). */
  example: number;
}

interface TreeNode {
  children: Map<string, TreeNode>;
  clusters: Cluster[];
}

const treeNode = (): TreeNode => ({ children: new Map(), clusters: [] });
const hasDigit = (token: string) => /\d/.test(token);

export class Drain {
  private readonly root = treeNode();
  readonly clusters: Cluster[] = [];
  /** Messages that fitted no group once maxClusters was reached. */
  unmatched = 0;

  constructor(private readonly options: DrainOptions = DEFAULT_DRAIN) {}

  /** Adds a message (`index`: its position in the caller's list, kept as the example). */
  add(message: string, index: number): Cluster | undefined {
    const tokens = tokensOf(message);
    const leaf = this.leafFor(tokens);
    const found = this.bestMatch(leaf.clusters, tokens);
    if (found) {
      found.count += 1;
      for (let i = 0; i < tokens.length; i++) if (found.template[i] !== tokens[i]) found.template[i] = WILDCARD;
      return found;
    }
    if (this.clusters.length >= this.options.maxClusters) {
      this.unmatched += 1;
      return undefined;
    }
    const cluster: Cluster = { id: this.clusters.length, template: [...tokens], count: 1, example: index };
    this.clusters.push(cluster);
    leaf.clusters.push(cluster);
    return cluster;
  }

  private leafFor(tokens: string[]): TreeNode {
    const length = String(tokens.length);
    let current: TreeNode | undefined = this.root.children.get(length);
    if (!current) {
      current = treeNode();
      this.root.children.set(length, current);
    }
    const leading = Math.min(Math.max(this.options.depth - 3, 0), tokens.length);
    for (let i = 0; i < leading; i++) {
      const token = hasDigit(tokens[i]!) ? WILDCARD : tokens[i]!;
      let next: TreeNode | undefined = current.children.get(token);
      if (!next) {
        const key = current.children.size < this.options.maxChildren ? token : WILDCARD;
        next = current.children.get(key);
        if (!next) {
          next = treeNode();
          current.children.set(key, next);
        }
      }
      current = next;
    }
    return current;
  }

  private bestMatch(candidates: Cluster[], tokens: string[]): Cluster | undefined {
    let best: Cluster | undefined;
    let bestScore = -1;
    let bestWildcards = -1;
    for (const cluster of candidates) {
      let same = 0;
      let wildcards = 0;
      for (let i = 0; i < tokens.length; i++) {
        const token = cluster.template[i];
        if (token === WILDCARD) wildcards += 1;
        else if (token === tokens[i]) same += 1;
      }
      const score = tokens.length === 0 ? 1 : same / tokens.length;
      if (score > bestScore || (score === bestScore && wildcards > bestWildcards)) {
        best = cluster;
        bestScore = score;
        bestWildcards = wildcards;
      }
    }
    return best && bestScore >= this.options.similarity ? best : undefined;
  }
}

/** A pattern's text: its tokens joined by one space. */
export const patternText = (template: readonly string[]): string => template.join(' ');

const quoted = (text: string) => `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;

/**
 * A search that finds a pattern's entries: its constant runs as phrases (the query language's
 * `"…"`, ANDed), within the original query. It may find a few more entries than the group holds
 * (another pattern with the same constant words); never fewer.
 */
export function patternQuery(template: readonly string[], query: string): string {
  const runs: string[] = [];
  let run: string[] = [];
  for (const token of [...template, WILDCARD]) {
    if (token === WILDCARD || token.includes(WILDCARD)) {
      // A token half masked (`id=<*>`) keeps its constant part as a run of its own.
      const parts = token === WILDCARD ? [] : token.split(WILDCARD).filter(Boolean);
      if (parts.length) run.push(parts[0]!);
      if (run.length) runs.push(run.join(' '));
      run = parts.slice(1);
      if (run.length > 1) {
        runs.push(...run.slice(0, -1));
        run = run.slice(-1);
      }
    } else run.push(token);
  }
  const phrases = runs
    .filter((text) => /[\p{L}\p{N}]/u.test(text))
    .slice(0, 8)
    .map((text) => quoted(text.slice(0, 200)));
  const base = query.trim();
  return [base ? `(${base})` : '', ...phrases].filter(Boolean).join(' ');
}
