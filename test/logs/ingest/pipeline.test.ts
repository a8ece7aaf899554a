import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { buildLogsService } from '../../../src/logs/app.js';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { createTestDatabase, DIALECTS } from '../../helpers/databases.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { bearer, LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../../helpers/logs.js';

/**
 * Every signal runs through the one ingestion pipeline and its one accounting path: traces and
 * metrics, sent by the official OpenTelemetry exporters over real HTTP, show on the pipeline
 * dashboard with their store write latency, as logs and `_bulk` do. The clock moves 5 ms at each
 * reading, so a write that is timed has a latency above zero (before the pipeline, traces and
 * metrics were counted without one).
 */
for (const dialect of DIALECTS) {
  describe(`one ingestion pipeline [${dialect}]`, () => {
    test('traces and metrics are counted with their write latency on the pipeline dashboard', async () => {
      const database = await createTestDatabase(dialect);
      let ms = Date.now();
      const now = () => (ms += 5);
      const config = loadLogsConfig({
        LOGS_DATABASE_URL: database.url,
        LOGS_ADMIN_PASSWORD,
        LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
        LOG_LEVEL: 'silent',
        LOGS_RETENTION_INTERVAL: '0',
        LOGS_SELF_METRICS_INTERVAL: '0',
      });
      const service = await buildLogsService({ config, now });
      try {
        const base = `http://127.0.0.1:${await listenOnLoopback(service.app)}`;
        const login = await service.app.inject({
          method: 'POST',
          url: '/api/login',
          payload: { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD },
        });
        const headers = bearer(login.json().token.access_token);
        const resource = resourceFromAttributes({ 'service.name': 'checkout' });

        const tracer = new BasicTracerProvider({
          resource,
          spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces`, headers }))],
        });
        for (const name of ['GET /cart', 'POST /pay']) tracer.getTracer('test').startSpan(name, { kind: SpanKind.SERVER }).end();
        await tracer.forceFlush();
        await tracer.shutdown();

        const reader = new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics`, headers }),
          exportIntervalMillis: 3_600_000,
        });
        const meter = new MeterProvider({ resource, readers: [reader] });
        meter
          .getMeter('test')
          .createObservableGauge('system.cpu.load_average.1m')
          .addCallback((result) => result.observe(0.5));
        await meter.shutdown(); // one last export

        const status = (await service.app.inject({ method: 'GET', url: '/api/v1/dashboard/pipeline/status', headers })).json();
        const source = (name: string) => status.sources.find((s: { source: string }) => s.source === name);
        for (const [name, stored] of [
          ['otlp-traces', 2],
          ['otlp-metrics', 1],
        ] as const) {
          const counted = source(name);
          assert.ok(counted, `${name} is listed`);
          assert.equal(counted.totals.accepted, stored, name);
          assert.equal(counted.backlog, 0, `${name}: nothing left in flight`);
          assert.ok(counted.last_5m.batches >= 1, name);
          assert.ok(
            counted.last_5m.avg_ingest_latency_ms > 0,
            `${name}: the store write is timed (${counted.last_5m.avg_ingest_latency_ms} ms)`,
          );
        }
      } finally {
        await service.app.close();
        await database.drop();
      }
    });
  });
}
