/**
 * The errors of the query language and of the requests that carry it. Each API surface translates
 * them once into its own error shape (logs/http/query-errors.ts for /api, elastic-errors.ts for the
 * Elasticsearch-compatible API); nothing below the front ends catches them.
 */

/** A syntax error in a search query, with the 0-based offset where it is (0 when the query was not typed as text). */
export class QuerySyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'QuerySyntaxError';
  }
}

/** A time range or histogram interval a request names that cannot be read (not a time, not from < to, too many buckets). */
export class TimeRangeError extends Error {
  override name = 'TimeRangeError';
}

/**
 * A query in Elasticsearch's DSL that is malformed (`parsing`: Elasticsearch's parsing_exception) or
 * outside the supported subset (`unsupported`: the message names what, docs/elasticsearch.md).
 */
export class DslError extends Error {
  constructor(
    readonly kind: 'parsing' | 'unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'DslError';
  }
}
