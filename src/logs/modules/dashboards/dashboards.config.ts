import { ConfigError, envReader, type Env } from '../../../shared/config/env.js';

/** A data center (site) of the deployment, from LOGS_SITES. */
export interface Site {
  /** Matched against the `dc` / `cloud.region` attribute of incoming logs (case-insensitive). */
  readonly id: string;
  readonly name: string;
}

export interface DashboardsConfig {
  /** Every site, the local one (this logs service's store) included. */
  readonly sites: readonly Site[];
  /** The id of the site this logs service runs in: its store is the one checked. */
  readonly localSiteId: string;
  /** A source that stored data before and has stored nothing for this long is `down`. */
  readonly downAfterMs: number;
  /** A source whose rejected share of received entries over 5 minutes is above this (percent) is `degraded`. */
  readonly degradedRejectedPercent: number;
  /** A source whose average store write over 5 minutes takes longer than this (ms) is `degraded`. */
  readonly slowIngestMs: number;
  /** How often the per-minute source counts are written to the database. */
  readonly sourceCountsFlushMs: number;
}

const SITE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `LOGS_SITES="jkt-1:Jakarta DC 1,sby-1:Surabaya DR"`; without it, one site named LOGS_SITE_NAME or `local`. */
export function loadDashboardsConfig(env: Env): DashboardsConfig {
  const read = envReader(env);
  const siteName = read.string('LOGS_SITE_NAME', 'local');
  if (!SITE_ID.test(siteName)) throw new ConfigError('LOGS_SITE_NAME', 'must be a site id: letters, digits, . _ - (at most 64)');
  const sites: Site[] = [];
  for (const item of read.list('LOGS_SITES')) {
    const colon = item.indexOf(':');
    const id = (colon < 0 ? item : item.slice(0, colon)).trim();
    const name = (colon < 0 ? id : item.slice(colon + 1)).trim() || id;
    if (!SITE_ID.test(id)) throw new ConfigError('LOGS_SITES', `has an invalid site id "${id}": letters, digits, . _ - (at most 64)`);
    if (sites.some((site) => site.id.toLowerCase() === id.toLowerCase()))
      throw new ConfigError('LOGS_SITES', `lists the site "${id}" twice`);
    sites.push({ id, name: name.slice(0, 200) });
  }
  if (sites.length === 0) sites.push({ id: siteName, name: siteName });
  // The local site: the one LOGS_SITE_NAME names, else the first listed.
  const local = sites.find((site) => site.id.toLowerCase() === siteName.toLowerCase()) ?? sites[0]!;
  const downAfterMs = read.duration('LOGS_PIPELINE_DOWN_AFTER', '5m');
  if (downAfterMs < 10_000) throw new ConfigError('LOGS_PIPELINE_DOWN_AFTER', 'must be at least 10s');
  const flush = read.duration('LOGS_SOURCE_COUNTS_FLUSH_INTERVAL', '5s');
  if (flush < 100) throw new ConfigError('LOGS_SOURCE_COUNTS_FLUSH_INTERVAL', 'must be at least 100ms');
  return Object.freeze({
    sites: Object.freeze(sites.map((site) => Object.freeze(site))),
    localSiteId: local.id,
    downAfterMs,
    degradedRejectedPercent: read.int('LOGS_PIPELINE_DEGRADED_REJECTED_PERCENT', 5, 0, 100),
    slowIngestMs: Math.max(1, read.duration('LOGS_PIPELINE_SLOW_INGEST', '2s')),
    sourceCountsFlushMs: flush,
  });
}
