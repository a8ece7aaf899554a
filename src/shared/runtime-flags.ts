import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by the CLI. V8's allocation-site pretenuring sometimes (decided early, run by run)
 * judges the proxy's per-request objects long-lived and allocates them straight into the old
 * generation, where collecting them is slow (docs/performance-notes.md, "Gateway"). A server whose
 * allocations are almost all per-request gains nothing from pretenuring. Set here, before the
 * services start, it takes effect (--trace-gc shows no promotion under load).
 */
setFlagsFromString('--no-allocation-site-pretenuring');
