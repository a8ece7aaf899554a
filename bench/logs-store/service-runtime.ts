/**
 * Imported first by run.ts and ingest.ts, so that the store runs under V8 as the logs service does:
 * the CLI's runtime flags (src/shared/runtime-flags.ts) and its young generation, which only node's
 * command line can set (src/logs/node-options.ts: `node --max-semi-space-size=64 --import tsx …`).
 */
import '../../src/shared/runtime-flags.js';
import { LOGS_NODE_OPTIONS, youngGenerationSized } from '../../src/logs/node-options.js';

/** Whether node runs with the logs service's young generation (recorded with the results). */
export const asTheService = youngGenerationSized();
if (!asTheService) {
  process.stderr.write(
    `note: node runs without the logs service's ${LOGS_NODE_OPTIONS.join(' ')}: ingest measures slower than the service's\n`,
  );
}
