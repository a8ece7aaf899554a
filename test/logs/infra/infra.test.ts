import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { OTLPMetricExporter as OtlpHttpMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { parseNetDev } from '../../../src/logs/modules/infra/self-metrics.js';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;

type Attr = { key: string; value: { stringValue: string } };
const attrs = (record: Record<string, string>): Attr[] =>
  Object.entries(record).map(([key, value]) => ({ key, value: { stringValue: value } }));
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** A data point in OTLP/JSON. */
const point = (ms: number, value: number, attributes: Record<string, string> = {}) => ({
  timeUnixNano: ns(ms),
  asDouble: value,
  attributes: attrs(attributes),
});

for (const dialect of DIALECTS) {
  describe(`infrastructure metrics [${dialect}]`, () => {
    let logs: TestLogs;
    let baseUrl: string;
    let writer: { headers: Record<string, string> };
    let viewer: { headers: Record<string, string> };
    /** A minute boundary ten minutes ago: JSON points are placed relative to it. */
    const base = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
    const window = `from=${new Date(base).toISOString()}&to=${new Date(base + 10 * MINUTE).toISOString()}&interval=1m`;

    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_SELF_METRICS_INTERVAL: '0' });
      baseUrl = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
      writer = await logs.userWith(['logs:write']);
      viewer = await logs.userWith(['dashboard:read']);
    });
    after(async () => logs.close());

    const get = async (url: string, headers: Record<string, string> = viewer.headers) => logs.request({ method: 'GET', url, headers });
    const send = async (body: object, headers: Record<string, string> = writer.headers) =>
      logs.request({ method: 'POST', url: '/v1/metrics', headers, payload: body });

    for (const [name, Exporter, compression] of [
      ['otlp-http (JSON, gzip)', OtlpHttpMetricExporter, 'gzip'],
      ['otlp-proto (protobuf)', OtlpProtoMetricExporter, 'none'],
    ] as const) {
      test(`host metrics with hostmetrics names from the official ${name} exporter show in /api/v1/infra/metrics`, async () => {
        const host = uniqueName('web-').toLowerCase();
        const exporter = new Exporter({ url: `${baseUrl}/v1/metrics`, headers: writer.headers, compression: compression as never });
        const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: HOUR });
        const provider = new MeterProvider({
          resource: resourceFromAttributes({ 'host.name': host, 'os.type': 'linux' }),
          readers: [reader],
        });
        const meter = provider.getMeter('otelcol/hostmetricsreceiver');
        meter.createObservableGauge('system.cpu.utilization', { unit: '1' }).addCallback((result) => {
          result.observe(0.25, { cpu: 'cpu0', state: 'user' });
          result.observe(0.75, { cpu: 'cpu0', state: 'idle' });
          result.observe(0.5, { cpu: 'cpu1', state: 'user' });
          result.observe(0.5, { cpu: 'cpu1', state: 'idle' });
        });
        meter.createObservableGauge('system.cpu.load_average.1m').addCallback((result) => result.observe(1.5));
        meter.createObservableUpDownCounter('system.memory.usage', { unit: 'By' }).addCallback((result) => {
          result.observe(6e9, { state: 'used' });
          result.observe(2e9, { state: 'free' });
        });
        meter.createObservableUpDownCounter('system.filesystem.usage', { unit: 'By' }).addCallback((result) => {
          result.observe(40e9, { device: '/dev/sda1', mountpoint: '/', state: 'used' });
          result.observe(60e9, { device: '/dev/sda1', mountpoint: '/', state: 'free' });
        });
        meter.createObservableCounter('system.network.io', { unit: 'By' }).addCallback((result) => {
          result.observe(1000, { device: 'eth0', direction: 'receive' });
          result.observe(500, { device: 'eth0', direction: 'transmit' });
        });
        await reader.forceFlush();
        await provider.shutdown();

        const now = Date.now();
        const response = await get(
          `/api/v1/infra/metrics?from=${new Date(now - HOUR).toISOString()}&to=${new Date(now + HOUR).toISOString()}&host=${host}`,
        );
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.equal(body.interval, '5m');
        assert.equal(body.hosts.length, 1);
        const [found] = body.hosts;
        assert.equal(found.host, host);
        assert.deepEqual(found.metrics, [
          'system.cpu.load_average.1m',
          'system.cpu.utilization',
          'system.filesystem.usage',
          'system.memory.usage',
          'system.network.io',
        ]);
        assert.equal(found.latest.cpuUtilization, 0.375);
        assert.equal(found.latest.load1m, 1.5);
        assert.equal(found.latest.memoryUsedBytes, 6e9);
        assert.equal(found.latest.memoryUtilization, 0.75);
        assert.equal(found.latest.diskUsedBytes, 40e9);
        assert.equal(found.latest.diskUtilization, 0.4);
        assert.equal(found.series.length, 24);
        assert.equal(found.series.filter((p: { memoryUsedBytes: number | null }) => p.memoryUsedBytes !== null).length, 1);
      });
    }

    test('cumulative CPU time and network counters become utilisation and per-second rates per bucket', async () => {
      const host = uniqueName('db-').toLowerCase();
      const t1 = base + 30_000;
      const t2 = base + 90_000;
      const t3 = base + 150_000;
      const sum = (dataPoints: object[]) => ({ sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints } });
      const response = await send({
        resourceMetrics: [
          {
            resource: { attributes: attrs({ 'host.name': host }) },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'system.cpu.time',
                    unit: 's',
                    ...sum([
                      point(t1, 10, { cpu: 'cpu0', state: 'user' }),
                      point(t1, 90, { cpu: 'cpu0', state: 'idle' }),
                      point(t2, 25, { cpu: 'cpu0', state: 'user' }),
                      point(t2, 135, { cpu: 'cpu0', state: 'idle' }),
                    ]),
                  },
                  {
                    name: 'system.network.io',
                    unit: 'By',
                    ...sum([
                      point(t1, 1_000_000, { device: 'eth0', direction: 'receive' }),
                      point(t2, 1_600_000, { device: 'eth0', direction: 'receive' }),
                      point(t3, 100, { device: 'eth0', direction: 'receive' }),
                      point(t1, 0, { device: 'eth0', direction: 'transmit' }),
                      point(t2, 120_000, { device: 'eth0', direction: 'transmit' }),
                    ]),
                  },
                  {
                    name: 'system.disk.io',
                    unit: 'By',
                    sum: {
                      aggregationTemporality: 1,
                      isMonotonic: true,
                      dataPoints: [point(t2, 6000, { device: 'sda', direction: 'write' })],
                    },
                  },
                ],
              },
            ],
          },
        ],
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), { partialSuccess: {} });
      const body = (await get(`/api/v1/infra/metrics?${window}&host=${host}`)).json();
      const series = body.hosts[0].series;
      assert.equal(series.length, 10);
      assert.equal(series[1].ts, new Date(base + MINUTE).toISOString());
      assert.equal(series[0].cpuUtilization, null, 'one sample per series: no rate yet');
      assert.equal(series[1].cpuUtilization, 0.25);
      assert.equal(series[1].networkReceiveBytesPerSec, 10_000);
      assert.equal(series[1].networkTransmitBytesPerSec, 2_000);
      assert.equal(series[2].networkReceiveBytesPerSec, null, 'a counter reset is no rate, not a negative one');
      assert.equal(series[1].diskWriteBytesPerSec, 100, 'delta temporality: the bucket sum per second');
      assert.equal(series[3].cpuUtilization, null);
    });

    test('container and pod metrics (kubeletstats and docker_stats names) in /api/v1/infra/containers', async () => {
      const gauge = (dataPoints: object[]) => ({ gauge: { dataPoints } });
      const t1 = base + 30_000;
      const t2 = base + 90_000;
      const response = await send({
        resourceMetrics: [
          {
            resource: { attributes: attrs({ 'k8s.pod.name': 'api-7d9', 'k8s.namespace.name': 'prod', 'k8s.node.name': 'node-1' }) },
            scopeMetrics: [
              {
                metrics: [
                  { name: 'k8s.pod.cpu.usage', unit: '{cpu}', ...gauge([point(t1, 0.5)]) },
                  { name: 'k8s.pod.memory.usage', unit: 'By', ...gauge([point(t1, 2e8)]) },
                  {
                    name: 'k8s.pod.network.io',
                    unit: 'By',
                    sum: {
                      aggregationTemporality: 2,
                      isMonotonic: true,
                      dataPoints: [
                        point(t1, 0, { direction: 'receive', interface: 'eth0' }),
                        point(t2, 30_000, { direction: 'receive', interface: 'eth0' }),
                      ],
                    },
                  },
                ],
              },
            ],
          },
          {
            resource: { attributes: attrs({ 'k8s.pod.name': 'api-7d9', 'k8s.namespace.name': 'prod', 'k8s.container.name': 'api' }) },
            scopeMetrics: [
              {
                metrics: [
                  { name: 'container.cpu.usage', unit: '{cpu}', ...gauge([point(t1, 0.4)]) },
                  { name: 'container.memory.working_set', unit: 'By', ...gauge([point(t1, 1.5e8)]) },
                ],
              },
            ],
          },
          {
            resource: { attributes: attrs({ 'container.id': 'abc123', 'container.name': 'redis', 'host.name': 'docker-host' }) },
            scopeMetrics: [
              {
                metrics: [
                  { name: 'container.cpu.utilization', unit: '1', ...gauge([point(t1, 12.5)]) },
                  { name: 'container.memory.usage.total', unit: 'By', ...gauge([point(t1, 5e7)]) },
                  {
                    name: 'container.network.io.usage.rx_bytes',
                    unit: 'By',
                    sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [point(t1, 1000), point(t2, 7000)] },
                  },
                ],
              },
            ],
          },
        ],
      });
      assert.equal(response.statusCode, 200, response.body);
      const result = await get(`/api/v1/infra/containers?${window}`);
      assert.equal(result.statusCode, 200, result.body);
      const containers = result.json().containers;
      const summary = containers.map(
        (c: { kind: string; id: string; pod: string | null; namespace: string | null; host: string | null }) => [
          c.kind,
          c.id,
          c.pod,
          c.namespace,
          c.host,
        ],
      );
      assert.deepEqual(summary, [
        ['container', 'abc123', null, null, 'docker-host'],
        ['container', 'api', 'api-7d9', 'prod', null],
        ['pod', 'prod/api-7d9', 'api-7d9', 'prod', null],
      ]);
      const [redis, apiContainer, pod] = containers;
      assert.equal(redis.latest.cpuUtilization, 12.5);
      assert.equal(redis.latest.memoryUsageBytes, 5e7);
      assert.equal(redis.series[1].networkReceiveBytesPerSec, 100);
      assert.equal(apiContainer.latest.cpuCores, 0.4);
      assert.equal(apiContainer.latest.memoryWorkingSetBytes, 1.5e8);
      assert.equal(pod.latest.cpuCores, 0.5);
      assert.equal(pod.latest.memoryUsageBytes, 2e8);
      assert.equal(pod.series[1].networkReceiveBytesPerSec, 500);
      // Container metrics are not hosts.
      const hosts = (await get(`/api/v1/infra/metrics?${window}`)).json().hosts.map((h: { host: string }) => h.host);
      assert.ok(!hosts.includes('docker-host'));
    });

    test("the self sampler reports the service's own host with hostmetrics names", async () => {
      const first = await logs.selfMetrics.sample();
      logs.clock.advance(30_000);
      await logs.selfMetrics.sample();
      assert.ok(first.some((p) => p.name === 'system.cpu.time' && p.attributes.state === 'idle'));
      const now = logs.clock.ms;
      const response = await get(
        `/api/v1/infra/metrics?from=${new Date(now - HOUR).toISOString()}&to=${new Date(now + MINUTE).toISOString()}&host=${encodeURIComponent(os.hostname())}`,
      );
      assert.equal(response.statusCode, 200, response.body);
      const [self] = response.json().hosts;
      assert.equal(self.host, os.hostname());
      for (const name of [
        'system.cpu.time',
        'system.cpu.load_average.1m',
        'system.memory.usage',
        'system.memory.utilization',
        'system.filesystem.usage',
      ])
        assert.ok(self.metrics.includes(name), name);
      assert.ok(self.latest.memoryUsedBytes > 0);
      assert.ok(self.latest.memoryUtilization > 0 && self.latest.memoryUtilization < 1);
      assert.ok(self.latest.diskUsedBytes > 0);
      assert.ok(self.latest.load1m >= 0);
    });

    test('malformed OTLP metrics are 400 and store nothing; bad points are rejected one by one', async () => {
      const before = logs.stats.snapshot()['otlp-metrics']!.stored;
      const garbage = await logs.request({
        method: 'POST',
        url: '/v1/metrics',
        headers: { ...writer.headers, 'content-type': 'application/x-protobuf' },
        payload: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]),
      });
      assert.equal(garbage.statusCode, 400);
      assert.equal((await send(['not', 'a', 'request'])).statusCode, 400);
      assert.equal(logs.stats.snapshot()['otlp-metrics']!.stored, before);
      const host = uniqueName('partial-').toLowerCase();
      const partial = await send({
        resourceMetrics: [
          {
            resource: { attributes: attrs({ 'host.name': host }) },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'system.cpu.load_average.1m',
                    gauge: {
                      dataPoints: [
                        point(base + 1000, 2),
                        { timeUnixNano: 'soon', asDouble: 1 },
                        { timeUnixNano: ns(base), asDouble: 'NaN' },
                      ],
                    },
                  },
                  { name: 'no.data' },
                ],
              },
            ],
          },
        ],
      });
      assert.equal(partial.statusCode, 200, partial.body);
      assert.equal(partial.json().partialSuccess.rejectedDataPoints, 3);
      const found = (await get(`/api/v1/infra/metrics?${window}&host=${host}`)).json().hosts[0];
      assert.equal(found.latest.load1m, 2);
      assert.equal(logs.stats.snapshot()['otlp-metrics']!.stored, before + 1);
    });

    test('bad parameters are 400; tenant isolation', async () => {
      for (const query of [
        'interval=soon',
        'interval=1s&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z',
        `from=${new Date(base).toISOString()}&to=${new Date(base).toISOString()}`,
        'from=notadate',
      ]) {
        for (const view of ['metrics', 'containers']) {
          const response = await get(`/api/v1/infra/${view}?${query}`);
          assert.equal(response.statusCode, 400, `${view} ${query}`);
          assert.equal(response.json().error, 'invalid json body');
        }
      }
      const created = await logs.request({
        method: 'POST',
        url: '/api/tenants',
        headers: await logs.admin(),
        payload: { name: `infra-${dialect}-${process.pid}` },
      });
      assert.equal(created.statusCode, 201, created.body);
      const other = await logs.userWith(['logs:write', 'dashboard:read'], { tenantId: created.json().id });
      const host = uniqueName('theirs-').toLowerCase();
      const sent = await send(
        {
          resourceMetrics: [
            {
              resource: { attributes: attrs({ 'host.name': host }) },
              scopeMetrics: [{ metrics: [{ name: 'system.cpu.load_average.1m', gauge: { dataPoints: [point(base + 1000, 3)] } }] }],
            },
          ],
        },
        other.headers,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      const theirs = (await get(`/api/v1/infra/metrics?${window}`, other.headers)).json().hosts.map((h: { host: string }) => h.host);
      assert.deepEqual(theirs, [host]);
      const ours = (await get(`/api/v1/infra/metrics?${window}`)).json().hosts.map((h: { host: string }) => h.host);
      assert.ok(!ours.includes(host));
      assert.deepEqual((await get(`/api/v1/infra/containers?${window}`, other.headers)).json().containers, []);
    });
  });
}

describe('self metrics configuration and helpers', () => {
  test('LOGS_SELF_METRICS_INTERVAL defaults to 30s, 0 disables, garbage is refused naming the variable', () => {
    assert.equal(loadLogsConfig({}).selfMetricsIntervalMs, 30_000);
    assert.equal(loadLogsConfig({ LOGS_SELF_METRICS_INTERVAL: '0' }).selfMetricsIntervalMs, 0);
    assert.throws(() => loadLogsConfig({ LOGS_SELF_METRICS_INTERVAL: 'often' }), /LOGS_SELF_METRICS_INTERVAL/);
  });

  test('/proc/net/dev is read per device', () => {
    const text = [
      'Inter-|   Receive                                                |  Transmit',
      ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed',
      '    lo:  1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0',
      '  eth0: 52000     400    0    0    0     0          0         0    31000     300    0    0    0     0       0          0',
    ].join('\n');
    assert.deepEqual(parseNetDev(text), [
      { device: 'lo', receive: 1000, transmit: 1000 },
      { device: 'eth0', receive: 52000, transmit: 31000 },
    ]);
  });
});
