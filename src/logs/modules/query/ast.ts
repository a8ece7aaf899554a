/** The parsed form of a search query (docs/log-search.md). Positions are 0-based character offsets. */

/**
 * `word`: a bare word; `phrase`: a "quoted phrase"; `prefix`: `term*`; `wildcard`: `t?rm`, `te*m`
 * (value in wildcard syntax: a backslash escapes); `regex`: `/regex/` (value without the slashes);
 * `fuzzy`: `term~`, `term~1`.
 */
export type TermMatch = 'word' | 'phrase' | 'prefix' | 'wildcard' | 'regex' | 'fuzzy';

export interface TermNode {
  kind: 'term';
  /** null: the default field (message). May hold `*` and `?`: every known field it matches. */
  field: string | null;
  value: string;
  match: TermMatch;
  /** Fuzzy terms: the edits allowed (`auto`: by the term's length, patterns.ts). */
  edits?: number | 'auto';
  position: number;
}

/** One end of a range; `inclusive` for `[`, `]`, `>=`, `<=`. */
export interface RangeBound {
  value: string;
  inclusive: boolean;
}

/** `field:[a TO b]`, `field:{a TO b}`, `field:>=a`, `field:<b`; a missing bound is open (`*`). */
export interface RangeNode {
  kind: 'range';
  field: string;
  lower: RangeBound | null;
  upper: RangeBound | null;
  position: number;
}

/** `_exists_:field` or `field:*`: the field has a non-empty value. */
export interface ExistsNode {
  kind: 'exists';
  field: string;
  position: number;
}

export interface AndNode {
  kind: 'and';
  children: QueryNode[];
}

export interface OrNode {
  kind: 'or';
  children: QueryNode[];
}

export interface NotNode {
  kind: 'not';
  child: QueryNode;
}

/** The empty query: everything in the time range. */
export interface AllNode {
  kind: 'all';
}

export type QueryNode = TermNode | RangeNode | ExistsNode | AndNode | OrNode | NotNode | AllNode;

/**
 * `children` ANDed or ORed as the parser builds them: a child of the same kind is flattened into
 * its parent, and one child stands for itself.
 */
export function joined(kind: 'and' | 'or', children: readonly QueryNode[]): QueryNode {
  const flat = children.flatMap((child) => (child.kind === kind ? child.children : [child]));
  return flat.length === 1 ? flat[0]! : { kind, children: flat };
}
