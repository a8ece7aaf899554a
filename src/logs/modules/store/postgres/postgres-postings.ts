import { equalityFacets, postgresFacet, type FacetLookup } from '../facets.js';
import type { Condition, TextExpr } from '../../query/condition.js';

/**
 * PostgreSQL's word index (docs/log-store.md, "Postings"; docs/scaling.md steps 2b and 2c): each
 * batch's entries of one UTC hour are a row of log_batches (their times) and a few rows of
 * log_postings (which of them hold each token, tokens hashed into groups: postings.ts). Counting a
 * word over a day reads one small row per piece; a page reads the entries its matches name (Hit: a
 * piece's place is its entry's id, postgres-blocks.ts). Written in the entries' own transaction, so
 * they always agree with the blocks (postgres-postings-write.ts); read by postgres-postings-read.ts.
 * Here: which conditions postings answer (the postings plan), and what they find (Hit).
 */

/**
 * What postings answer: tokens (our words and the tsvector's facet lexemes) and prefixes of words,
 * under and, or, not.
 */
export type PostingsExpr =
  | { kind: 'token'; token: string }
  | { kind: 'prefix'; prefix: string }
  /** Words in a row, two or more: found by the pieces' pairs (pairToken), else by the words. */
  | { kind: 'phrase'; tokens: string[] }
  | { kind: 'and' | 'or'; children: PostingsExpr[] }
  | { kind: 'not'; child: PostingsExpr };

/**
 * A condition as postings answer it: `exact`, their matches are the condition's; otherwise they are
 * candidates, a superset that the rows check (a phrase of three words or more is found by its pairs
 * of words; an AND keeps what postings answer of it and leaves the rest, a range say, to the rows).
 * `exactByPairs`: inexact only by phrases of two words, which a piece that posts their pair answers
 * exactly; so the postings count it, and only the candidates of the other pieces are the rows' to check.
 */
export interface PostingsPlan {
  expr: PostingsExpr;
  exact: boolean;
  exactByPairs: boolean;
}

/**
 * The postings plan of a condition, or null when postings cannot narrow it: a condition on what the
 * tsvector does not hold (compile-postgres.ts checks those on the rows) other than beside one they
 * answer under AND, an OR with such a side, the NOT of candidates.
 */
export function postingsPlan(condition: Condition, facets: FacetLookup): PostingsPlan | null {
  switch (condition.kind) {
    case 'text':
      return textPlan(condition.expr);
    case 'equals': {
      const values = equalityFacets(condition.field, condition.value, facets.unfaceted);
      if (values === null) return null;
      const tokens: PostingsExpr[] = values.map((value) => ({ kind: 'token', token: postgresFacet(facets.tokenOf(value)) }));
      return { expr: tokens.length === 1 ? tokens[0]! : { kind: 'or', children: tokens }, exact: true, exactByPairs: true };
    }
    case 'and':
    case 'or':
      return combine(
        condition.kind,
        condition.children.map((child) => (child.kind === 'all' ? 'all' : postingsPlan(child, facets))),
      );
    case 'not':
      return negate(postingsPlan(condition.child, facets));
    default:
      return null;
  }
}

function textPlan(expr: TextExpr): PostingsPlan | null {
  switch (expr.kind) {
    case 'phrase': {
      if (expr.tokens.length === 1) {
        const [token] = expr.tokens as [string];
        return { expr: expr.prefix ? { kind: 'prefix', prefix: token } : { kind: 'token', token }, exact: true, exactByPairs: true };
      }
      if (!expr.prefix) return { expr: { kind: 'phrase', tokens: expr.tokens }, exact: false, exactByPairs: expr.tokens.length === 2 };
      // A phrase ending in a prefix: its words in a row, and an entry with a word of the prefix.
      const words = expr.tokens.slice(0, -1);
      const children: PostingsExpr[] = [
        words.length === 1 ? { kind: 'token', token: words[0]! } : { kind: 'phrase', tokens: words },
        { kind: 'prefix', prefix: expr.tokens.at(-1)! },
      ];
      return { expr: { kind: 'and', children }, exact: false, exactByPairs: false };
    }
    case 'and':
    case 'or':
      return combine(expr.kind, expr.children.map(textPlan));
    case 'not':
      return negate(textPlan(expr.child));
  }
}

/** AND drops the children postings cannot narrow ('all' narrows nothing and is true), OR needs every child. */
function combine(kind: 'and' | 'or', children: (PostingsPlan | null | 'all')[]): PostingsPlan | null {
  if (kind === 'or' && children.some((child) => child === null || child === 'all')) return null;
  const kept = children.filter((child): child is PostingsPlan => child !== null && child !== 'all');
  if (kept.length === 0) return null;
  const whole = kept.length === children.filter((child) => child !== 'all').length;
  return {
    expr: kept.length === 1 ? kept[0]!.expr : { kind, children: kept.map((child) => child.expr) },
    exact: whole && kept.every((child) => child.exact),
    exactByPairs: whole && kept.every((child) => child.exactByPairs),
  };
}

/** The complement of candidates is no superset of the NOT: only an exact child can be negated. */
function negate(child: PostingsPlan | null): PostingsPlan | null {
  return child !== null && child.exact ? { expr: { kind: 'not', child: child.expr }, exact: true, exactByPairs: true } : null;
}

/** An entry's place in its piece (the piece's number times this, plus the place, is its id): a piece holds at most this many. */
export const PLACES = 65_536;

/** An entry the postings found: its time and id (its piece's number × PLACES + its place). */
export interface Hit {
  ts: number;
  id: number;
}

/** The id of the entry at `place` of the piece numbered `piece` (log_batches.batch). */
export function idOf(piece: string, place: number): number {
  return Number(piece) * PLACES + place;
}
