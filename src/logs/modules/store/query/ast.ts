/** The parsed form of a search query (docs/log-search.md). Positions are 0-based character offsets. */

/** `word`: a bare word; `phrase`: a "quoted phrase"; `prefix`: `term*`. */
export type TermMatch = 'word' | 'phrase' | 'prefix';

export interface TermNode {
  kind: 'term';
  /** null: the default field (message). */
  field: string | null;
  value: string;
  match: TermMatch;
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

export type QueryNode = TermNode | AndNode | OrNode | NotNode | AllNode;
