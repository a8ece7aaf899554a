import type { StatsFs } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { Counter, Gauge, Registry } from 'prom-client';
import { collectRuntimeMetrics } from '../../../shared/http/runtime-metrics.js';
import type { PipelineStats } from '../ingest/pipeline-stats.js';
import type { ReplicaState } from '../store/postgres/read-replicas.js';

export interface LogsMetricsSources {
  /** Whether this instance leads (runs the once-per-cluster jobs). */
  leading: () => boolean;
  stats: PipelineStats;
  /** Bytes the service's database takes (SQLite pages, pg_database_size). */
  storeBytes: () => Promise<number>;
  /** Firing alerts of every tenant, by severity. */
  firingAlerts: () => Promise<{ severity: string; count: number }[]>;
  /** The directory of the SQLite files; undefined on PostgreSQL (whose disk is the database server's). */
  dataDirectory?: string | undefined;
  /** The log store's read replicas (LOGS_DATABASE_READ_URL): none on SQLite or without the variable. */
  readReplicas?: () => readonly ReplicaState[];
}

/** A figure of the file system holding `directory`; NaN when it cannot be read (the scrape still answers). */
async function filesystemBytes(directory: string, figure: (stats: StatsFs) => number): Promise<number> {
  return statfs(directory).then(figure, () => Number.NaN);
}

/**
 * The logs service's Prometheus metrics (docs/metrics.md), in its own registry: the process and
 * Node runtime series, ingestion (read from PipelineStats at scrape time), store size, the data
 * directory's file system, alert evaluations, firing alerts, webhook deliveries and retention
 * removals. Request metrics by route: shared/http/route-metrics.ts.
 */
export class LogsMetrics {
  readonly registry = new Registry();

  readonly alertEvaluations = new Counter({
    name: 'logs_alert_evaluations_total',
    help: 'Alert rule evaluations by outcome (holds: the condition was met, clear, error)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'logs_webhook_deliveries_total',
    help: 'Alert webhook attempts by outcome (delivered, failed, refused by the address policy)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookRetries = new Counter({
    name: 'logs_webhook_retries_total',
    help: 'Alert webhook attempts after the first',
    registers: [this.registry],
  });

  readonly retentionRemoved = new Counter({
    name: 'logs_retention_removed_total',
    help: 'Log entries, spans and metric points removed by the retention sweep, by tenant',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });

  constructor(sources: LogsMetricsSources) {
    const { stats } = sources;
    collectRuntimeMetrics(this.registry);
    new Gauge({
      name: 'logs_leader',
      help: 'Whether this instance leads: 1 while it runs the once-per-cluster jobs (retention, alert evaluation and webhooks), else 0',
      registers: [this.registry],
      collect() {
        this.set(sources.leading() ? 1 : 0);
      },
    });
    const perTenant = () =>
      stats
        .tenantIds()
        .flatMap((tenant) => Object.entries(stats.snapshot(tenant)).map(([source, counters]) => ({ tenant, source, counters })));
    new Counter({
      name: 'logs_ingest_batches_total',
      help: 'Ingestion requests (batches) by source (otlp, bulk, gateway, otlp-traces, otlp-metrics) and tenant',
      labelNames: ['source', 'tenant'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { tenant, source, counters } of perTenant()) this.inc({ source, tenant }, counters.batches);
      },
    });
    new Counter({
      name: 'logs_ingest_entries_total',
      help: 'Ingested entries by source, tenant and outcome (received, stored, rejected)',
      labelNames: ['source', 'tenant', 'outcome'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { tenant, source, counters } of perTenant()) {
          for (const outcome of ['received', 'stored', 'rejected'] as const) this.inc({ source, tenant, outcome }, counters[outcome]);
        }
      },
    });
    new Counter({
      name: 'logs_ingest_store_failures_total',
      help: 'Ingestion batches whose store write failed, by source and tenant',
      labelNames: ['source', 'tenant'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { tenant, source, counters } of perTenant()) this.inc({ source, tenant }, counters.storeFailures);
      },
    });
    new Gauge({
      name: 'logs_ingest_in_flight_entries',
      help: 'Entries received and not yet stored (the ingestion queue), by source',
      labelNames: ['source'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [source, counters] of Object.entries(stats.snapshot())) this.set({ source }, counters.inFlight);
      },
    });
    new Gauge({
      name: 'logs_store_size_bytes',
      help: "Bytes the service's database takes on disk",
      registers: [this.registry],
      // With the database away the scrape still answers (the store failures are the news): the last value stays.
      async collect() {
        const bytes = await sources.storeBytes().catch(() => undefined);
        if (bytes !== undefined) this.set(bytes);
      },
    });
    new Gauge({
      name: 'logs_alerts_firing',
      help: 'Firing alerts of every tenant, by severity',
      labelNames: ['severity'] as const,
      registers: [this.registry],
      async collect() {
        const firing = await sources.firingAlerts().catch(() => undefined);
        if (firing === undefined) return;
        this.reset();
        for (const { severity, count } of firing) this.set({ severity }, count);
      },
    });
    // Read replicas by their place in LOGS_DATABASE_READ_URL, never by URL (it may hold a password).
    const replicas = sources.readReplicas ?? (() => []);
    const replicaGauge = (name: string, help: string, value: (state: ReplicaState) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['replica'] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const state of replicas()) {
            const figure = value(state);
            if (figure !== undefined) this.set({ replica: String(state.replica) }, figure);
          }
        },
      });
    replicaGauge('logs_read_replica_up', 'Whether the log store reads from the read replica (1) or left it out (0)', (state) =>
      state.up ? 1 : 0,
    );
    replicaGauge(
      'logs_read_replica_lag_seconds',
      'How far the read replica was behind the primary at its last check, in seconds (an upper bound)',
      (state) => state.lagSeconds,
    );
    replicaGauge('logs_read_replica_lag_bytes', 'WAL bytes the read replica had not replayed at its last check', (state) => state.lagBytes);
    const directory = sources.dataDirectory;
    if (directory !== undefined) {
      // node_exporter's node_filesystem_{avail,size}_bytes for the one directory that matters here.
      new Gauge({
        name: 'logs_data_filesystem_avail_bytes',
        help: 'Bytes free to the service on the file system of its data directory (SQLite)',
        registers: [this.registry],
        async collect() {
          this.set(await filesystemBytes(directory, (stats) => stats.bavail * stats.bsize));
        },
      });
      new Gauge({
        name: 'logs_data_filesystem_size_bytes',
        help: 'Size of the file system of the data directory (SQLite)',
        registers: [this.registry],
        async collect() {
          this.set(await filesystemBytes(directory, (stats) => stats.blocks * stats.bsize));
        },
      });
    }
  }
}
