/**
 * Node's options the logs service runs with (docs/operations.md, "Memory"): a young generation of
 * 64 MB semi-spaces instead of V8's 16. A batch's entries live from parsing until their commit (tens
 * of milliseconds), long enough for the default young generation to copy them on into the old one,
 * which then collects them at far greater cost (docs/performance-notes.md, "Log service"). They
 * are V8's, so they must be on node's command line or in NODE_OPTIONS: set at run time they change
 * nothing.
 */
export const LOGS_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=64'];

/** Whether node was started with its young generation sized (on its command line or in NODE_OPTIONS), by us or an operator. */
export function youngGenerationSized(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((option) => /^--max[-_]semi[-_]space[-_]size\b/.test(option));
}
