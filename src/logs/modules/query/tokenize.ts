/**
 * What a word is, for searching and for indexing alike. Both dialects index the tokens it produces
 * (store/indexed-text.ts) and query words are tokenized the same way, so a word matches identically
 * on SQLite and PostgreSQL.
 *
 * A token is a run of letters and digits (any script), lower-cased, with diacritics removed
 * ("Café" -> "cafe"). Everything else separates tokens.
 */

/** Longer tokens are not indexed (PostgreSQL caps lexemes at 2 KB; such runs are never searched as words). */
export const MAX_TOKEN_LENGTH = 200;
/** Only the first words of a huge message are indexed (PostgreSQL's last tsvector position is 16383). */
export const MAX_INDEXED_TOKENS = 16383;

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
export const ASCII = /^[\x00-\x7f]*$/;
const TOKEN = /[\p{L}\p{N}]+/gu;
const ASCII_TOKEN = /[a-z0-9]+/g;
const MARKS = /\p{M}+/gu;

export function tokenize(text: string): string[] {
  const ascii = ASCII.test(text);
  const source = (ascii ? text : text.normalize('NFKD').replace(MARKS, '')).toLowerCase();
  const found = source.match(ascii ? ASCII_TOKEN : TOKEN) ?? [];
  const tokens = found.length > MAX_INDEXED_TOKENS ? found.slice(0, MAX_INDEXED_TOKENS) : found;
  return tokens.some((token) => token.length > MAX_TOKEN_LENGTH) ? tokens.filter((token) => token.length <= MAX_TOKEN_LENGTH) : tokens;
}
