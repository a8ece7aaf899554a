import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { root } from '../../src/logs/modules/ingest/otlp-proto.js';
import '../../src/logs/modules/ingest/otlp-proto-telemetry.js';
import { DIALECTS } from '../helpers/databases.js';
import { uniqueName } from '../helpers/logs.js';
import { startLogsUnderFault, type LogsUnderFault } from '../helpers/logs-fault-fixture.js';
import { requestHead, sendThenClose } from '../helpers/raw-http.js';

/**
 * Fault suite, logs service: shippers that die mid-upload (half a `_bulk` or OTLP body, declared by
 * Content-Length or chunked, plain or gzip) and a shipper that retries after giving up on an answer.
 * Nothing of a broken request is stored; the next whole request is; the process keeps serving and
 * its descriptors and memory come back down.
 */

const ENTRIES = 200;
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

function bulkBody(marker: string): string {
  return `${Array.from({ length: ENTRIES }, (_, i) => `{"index":{}}\n${JSON.stringify({ message: `shipped ${marker} line ${i}` })}`).join('\n')}\n`;
}

/** One OTLP signal: a request holding `ENTRIES` items tagged with a marker, and how many items of that marker are stored. */
interface Signal {
  path: string;
  message: string;
  json(marker: string): Record<string, unknown>;
  stored(logs: LogsUnderFault, marker: string): Promise<number>;
}

const resource = (attributes: Record<string, string>) => ({
  attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
});
const traceIdOf = (marker: string) => Buffer.from(marker.padEnd(16, '0').slice(-16)).toString('hex');

const SIGNALS: Signal[] = [
  {
    path: '/v1/logs',
    message: 'otlp.ExportLogsServiceRequest',
    json: (marker) => ({
      resourceLogs: [
        {
          resource: resource({ 'service.name': 'faults' }),
          scopeLogs: [
            {
              logRecords: Array.from({ length: ENTRIES }, (_, i) => ({
                timeUnixNano: ns(Date.now()),
                body: { stringValue: `otlp ${marker} record ${i}` },
              })),
            },
          ],
        },
      ],
    }),
    stored: (logs, marker) => logs.count(marker),
  },
  {
    path: '/v1/traces',
    message: 'otlp.ExportTraceServiceRequest',
    json: (marker) => ({
      resourceSpans: [
        {
          resource: resource({ 'service.name': 'faults' }),
          scopeSpans: [
            {
              spans: Array.from({ length: ENTRIES }, (_, i) => ({
                traceId: traceIdOf(marker),
                spanId: (i + 1).toString(16).padStart(16, '0'),
                name: `op ${i}`,
                startTimeUnixNano: ns(Date.now() - 1000),
                endTimeUnixNano: ns(Date.now()),
              })),
            },
          ],
        },
      ],
    }),
    async stored(logs, marker) {
      const response = await logs.call('GET', `/api/v1/apm/traces/${traceIdOf(marker)}`, { headers: { authorization: logs.admin } });
      if (response.status === 404) return 0;
      assert.equal(response.status, 200, response.body.toString());
      return (JSON.parse(response.body.toString()) as { spans: unknown[] }).spans.length;
    },
  },
  {
    path: '/v1/metrics',
    message: 'otlp.ExportMetricsServiceRequest',
    json: (marker) => ({
      resourceMetrics: [
        {
          resource: resource({ 'host.name': marker }),
          scopeMetrics: [
            {
              metrics: [
                {
                  name: 'system.cpu.load_average.1m',
                  gauge: {
                    dataPoints: Array.from({ length: ENTRIES }, (_, i) => ({ timeUnixNano: ns(Date.now() - i * 1000), asDouble: 1.5 })),
                  },
                },
              ],
            },
          ],
        },
      ],
    }),
    async stored(logs, marker) {
      const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
      const response = await logs.call('GET', `/api/v1/infra/metrics?${range}&host=${marker}`, { headers: { authorization: logs.admin } });
      assert.equal(response.status, 200, response.body.toString());
      return (JSON.parse(response.body.toString()) as { hosts: unknown[] }).hosts.length;
    },
  },
];

/** The OTLP/JSON object as protobuf (ids from hex to bytes, as the protobuf form carries them). */
function protobufOf(message: string, json: Record<string, unknown>): Buffer {
  const type = root.lookupType(message);
  const withBytes = JSON.parse(JSON.stringify(json), (key, value: unknown) =>
    (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'hex') : value,
  ) as Record<string, unknown>;
  return Buffer.from(type.encode(type.fromObject(withBytes)).finish());
}

for (const dialect of DIALECTS) {
  describe(`logs faults: half a body [${dialect}]`, () => {
    let logs: LogsUnderFault;
    before(async () => {
      logs = await startLogsUnderFault(dialect);
    });
    after(async () => logs?.close());

    const bulkHeaders = () => ({ authorization: logs.admin, 'content-type': 'application/x-ndjson' });

    /** The broken request's marker has nothing stored, once a whole request sent after it was stored. */
    async function wholeRequestStoredAndNothingOf(
      brokenMarker: string,
      count: (marker: string) => Promise<number>,
      sendWhole: (marker: string) => Promise<void>,
      expected = ENTRIES,
    ) {
      const wholeMarker = uniqueName('whole').toLowerCase();
      await sendWhole(wholeMarker);
      assert.equal(await count(wholeMarker), expected);
      assert.equal(await count(brokenMarker), 0, 'nothing of the broken request is stored');
    }
    const sendWholeBulk = async (marker: string) => {
      const response = await logs.call('POST', '/api/v1/_elastic/_bulk', { headers: bulkHeaders(), body: bulkBody(marker) });
      assert.equal(response.status, 200, response.body.toString());
    };

    test('_bulk: Content-Length larger than what is sent, then the client closes: nothing stored, the next batch is', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('halfcl').toLowerCase();
      const body = Buffer.from(bulkBody(marker));
      await sendThenClose(
        logs.port,
        requestHead('POST', '/api/v1/_elastic/_bulk', { ...bulkHeaders(), 'content-length': body.length }),
        body.subarray(0, body.length / 2),
      );
      await wholeRequestStoredAndNothingOf(marker, logs.count, sendWholeBulk);
      await logs.stillServes(baseline);
    });

    test('_bulk: chunked, the client closes before the last chunk: nothing stored, the next batch is', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('halfchunked').toLowerCase();
      const body = Buffer.from(bulkBody(marker));
      const firstHalf = body.subarray(0, body.length / 2);
      // Two whole chunks (each NDJSON lines cut anywhere), never the terminating zero-length chunk.
      const cut = '{"index":{}}\n{"me';
      const chunks = Buffer.concat([
        Buffer.from(`${firstHalf.length.toString(16)}\r\n`),
        firstHalf,
        Buffer.from(`\r\n${cut.length.toString(16)}\r\n${cut}\r\n`),
      ]);
      await sendThenClose(
        logs.port,
        requestHead('POST', '/api/v1/_elastic/_bulk', { ...bulkHeaders(), 'transfer-encoding': 'chunked' }),
        chunks,
      );
      await wholeRequestStoredAndNothingOf(marker, logs.count, sendWholeBulk);
      await logs.stillServes(baseline);
    });

    test('_bulk gzip: half of the compressed body, then the client closes: nothing stored, the next (gzip) batch is', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('halfgzip').toLowerCase();
      const body = gzipSync(bulkBody(marker));
      const headers = { ...bulkHeaders(), 'content-encoding': 'gzip' };
      await sendThenClose(
        logs.port,
        requestHead('POST', '/api/v1/_elastic/_bulk', { ...headers, 'content-length': body.length }),
        body.subarray(0, body.length / 2),
      );
      await wholeRequestStoredAndNothingOf(marker, logs.count, async (whole) => {
        const response = await logs.call('POST', '/api/v1/_elastic/_bulk', { headers, body: gzipSync(bulkBody(whole)) });
        assert.equal(response.status, 200, response.body.toString());
      });
      await logs.stillServes(baseline);
    });

    test('_bulk gzip: a whole request whose gzip stream is cut short gets 400 in the documented shape, nothing stored', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('cutgzip').toLowerCase();
      const body = gzipSync(bulkBody(marker));
      const response = await logs.call('POST', '/api/v1/_elastic/_bulk', {
        headers: { ...bulkHeaders(), 'content-encoding': 'gzip' },
        body: body.subarray(0, body.length / 2),
      });
      assert.equal(response.status, 400, response.body.toString());
      // In Elasticsearch's shape, as every answer of the compatible API (docs/elasticsearch.md).
      const answer = JSON.parse(response.body.toString()) as { error: { type: string; reason: string }; status: number };
      assert.equal(answer.status, 400);
      assert.equal(typeof answer.error.reason, 'string');
      await wholeRequestStoredAndNothingOf(marker, logs.count, sendWholeBulk);
      await logs.stillServes(baseline);
    });

    for (const signal of SIGNALS) {
      for (const encoding of ['json', 'protobuf'] as const) {
        test(`${signal.path} ${encoding}: half the body, then the client closes: nothing stored, the next whole request is`, async () => {
          const baseline = logs.baseline();
          const marker = uniqueName(`half${encoding}`).toLowerCase();
          const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
          const encode = (m: string) =>
            encoding === 'json' ? Buffer.from(JSON.stringify(signal.json(m))) : protobufOf(signal.message, signal.json(m));
          const body = encode(marker);
          await sendThenClose(
            logs.port,
            requestHead('POST', signal.path, { authorization: logs.admin, 'content-type': contentType, 'content-length': body.length }),
            body.subarray(0, body.length / 2),
          );
          const expected = signal.path === '/v1/metrics' ? 1 : ENTRIES;
          await wholeRequestStoredAndNothingOf(
            marker,
            (m) => signal.stored(logs, m),
            async (whole) => {
              const response = await logs.call('POST', signal.path, {
                headers: { authorization: logs.admin, 'content-type': contentType },
                body: encode(whole),
              });
              assert.equal(response.status, 200, response.body.toString());
            },
            expected,
          );
          await logs.stillServes(baseline);
        });
      }
    }

    test('a shipper that gives up on an answer and sends the same _bulk again: the retry is stored; the aborted copy whole or not at all (no de-duplication yet)', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('retried').toLowerCase();
      const body = Buffer.from(bulkBody(marker));
      const head = requestHead('POST', '/api/v1/_elastic/_bulk', {
        authorization: logs.basic,
        'content-type': 'application/x-ndjson',
        'content-length': body.length,
      });
      // The whole request is sent, and the client aborts before the answer (its timeout fired).
      await sendThenClose(logs.port, head, body);
      const retry = await logs.call('POST', '/api/v1/_elastic/_bulk', {
        headers: { authorization: logs.basic, 'content-type': 'application/x-ndjson' },
        body,
      });
      assert.equal(retry.status, 200, retry.body.toString());
      // Whether the aborted copy is stored depends on how far it got before the close was seen (it is
      // whole: the service may finish it). Either way batches are stored whole: one copy or two, never a part.
      const stored = await logs.count(marker);
      assert.ok(stored === ENTRIES || stored === 2 * ENTRIES, `stored ${stored}`);
      await logs.stillServes(baseline);
      const settled = await logs.count(marker);
      assert.ok(settled === ENTRIES || settled === 2 * ENTRIES, `stored ${settled}`);
    });
  });
}
