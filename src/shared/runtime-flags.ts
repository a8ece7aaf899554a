import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by the CLI. V8's allocation-site pretenuring sometimes (decided early, run by run)
 * judges the proxy's per-request objects long-lived and allocates them straight into the old
 * generation: scavenges then take five times longer, old-space collections follow every second or
 * two, and the gateway loses a fifth of its throughput (docs/benchmarks.md). A server whose
 * allocations are almost all per-request gains nothing from pretenuring. Set here, before the
 * services start, it takes effect (measured with --trace-gc: no more promotion under load).
 */
setFlagsFromString('--no-allocation-site-pretenuring');
