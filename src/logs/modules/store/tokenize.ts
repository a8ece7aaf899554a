/**
 * The one tokenizer of the log store. Both dialects index the tokens it produces (SQLite FTS5 gets
 * them space-joined, PostgreSQL gets a hand-built tsvector) and queries are tokenized the same way,
 * so a word matches identically on SQLite and PostgreSQL.
 *
 * A token is a run of letters and digits (any script), lower-cased, with diacritics removed
 * ("Café" -> "cafe"). Everything else separates tokens.
 */

/** Longer tokens are not indexed (PostgreSQL caps lexemes at 2 KB; such runs are never searched as words). */
export const MAX_TOKEN_LENGTH = 200;
/** Only the first words of a huge message are indexed (PostgreSQL's last tsvector position is 16383). */
export const MAX_INDEXED_TOKENS = 16383;

const ASCII = /^[\x00-\x7f]*$/;
const TOKEN = /[\p{L}\p{N}]+/gu;
const ASCII_TOKEN = /[A-Za-z0-9]+/g;
const MARKS = /\p{M}+/gu;

export function tokenize(text: string): string[] {
  let source = text;
  let pattern = ASCII_TOKEN;
  if (!ASCII.test(text)) {
    source = text.normalize('NFKD').replace(MARKS, '');
    pattern = TOKEN;
  }
  const tokens: string[] = [];
  for (const match of source.matchAll(pattern)) {
    const token = match[0];
    if (token.length <= MAX_TOKEN_LENGTH) tokens.push(token.toLowerCase());
    if (tokens.length >= MAX_INDEXED_TOKENS) break;
  }
  return tokens;
}
