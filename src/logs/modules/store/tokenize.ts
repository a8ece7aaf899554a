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

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII = /^[\x00-\x7f]*$/;
const TOKEN = /[\p{L}\p{N}]+/gu;
const ASCII_TOKEN = /[a-z0-9]+/g;
const MARKS = /\p{M}+/gu;

/**
 * The text SQLite's FTS5 indexes for a message. FTS5's unicode61 tokenizer splits ASCII exactly as
 * tokenize() does (letters and digits, lower-cased), so a plain ASCII message without over-long runs
 * is handed over as is and FTS5 tokenizes it in C; anything else gets our tokens, space-joined.
 */
export function ftsBody(message: string): string {
  return isPlainMessage(message) ? message : tokenize(message).join(' ');
}

/**
 * A message whose tokens are exactly the runs of `[a-z0-9]` of its lower-cased text: ASCII, short
 * enough that no token is dropped, no run over MAX_TOKEN_LENGTH. FTS5 takes it as it is (ftsBody);
 * PostgreSQL checks its words with a regular expression (compile-postgres.ts) and stores the tokens
 * only of the other messages (`words`).
 */
function isPlainMessage(message: string): boolean {
  return (
    message.length < 2 * MAX_INDEXED_TOKENS && ASCII.test(message) && (message.length <= MAX_TOKEN_LENGTH || !LONG_ASCII_RUN.test(message))
  );
}

/** What PostgreSQL stores in `words`: null for a plain message, else its tokens (`tokens`, if made already) space-joined. */
export function storedWords(message: string, tokens?: readonly string[]): string | null {
  return isPlainMessage(message) ? null : (tokens ?? tokenize(message)).join(' ');
}

const LONG_ASCII_RUN = new RegExp(`[A-Za-z0-9]{${MAX_TOKEN_LENGTH + 1}}`);

export function tokenize(text: string): string[] {
  const ascii = ASCII.test(text);
  const source = (ascii ? text : text.normalize('NFKD').replace(MARKS, '')).toLowerCase();
  const found = source.match(ascii ? ASCII_TOKEN : TOKEN) ?? [];
  const tokens = found.length > MAX_INDEXED_TOKENS ? found.slice(0, MAX_INDEXED_TOKENS) : found;
  return tokens.some((token) => token.length > MAX_TOKEN_LENGTH) ? tokens.filter((token) => token.length <= MAX_TOKEN_LENGTH) : tokens;
}
