import { ASCII, MAX_INDEXED_TOKENS, MAX_TOKEN_LENGTH, tokenize } from '../query/tokenize.js';

/** What the full-text indexes store of a message: its tokens (query/tokenize.ts), handed over as each dialect takes them. */

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
