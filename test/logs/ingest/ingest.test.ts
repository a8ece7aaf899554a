import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as OtlpHttpExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OtlpProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { DIALECTS } from '../../helpers/databases.js';
import { PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';
import { listenOnLoopback } from '../../helpers/listen.js';

const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`logs ingestion [${dialect}]`, () => {
    let logs: TestLogs;
    let baseUrl: string;
    let writer: { headers: Record<string, string>; username: string };
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_INGEST_BODY_LIMIT: '65536' });
      baseUrl = `http://127.0.0.1:${await listenOnLoopback(logs.app)}`;
      writer = await logs.userWith(['logs:write']);
    });
    after(async () => logs.close());

    /** Entries of the admin's tenant matching the query, over the last and next hour of real time. */
    async function search(query: string, extra: object = {}) {
      const now = Date.now();
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers: await logs.admin(),
        payload: {
          query,
          timeRange: { from: new Date(now - HOUR).toISOString(), to: new Date(now + HOUR).toISOString() },
          limit: 100,
          ...extra,
        },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    }

    for (const [name, Exporter, compression] of [
      ['otlp-http (JSON, gzip)', OtlpHttpExporter, 'gzip'],
      ['otlp-proto (protobuf)', OtlpProtoExporter, 'none'],
    ] as const) {
      test(`the official ${name} exporter ships logs that are then found by search`, async () => {
        const marker = uniqueName('exported').toLowerCase();
        const exporter = new Exporter({ url: `${baseUrl}/v1/logs`, headers: writer.headers, compression: compression as never });
        const provider = new LoggerProvider({
          resource: resourceFromAttributes({ 'service.name': `svc-${marker}`, 'host.name': 'node-7', 'k8s.pod.name': 'api-1' }),
          processors: [new SimpleLogRecordProcessor({ exporter })],
        });
        const logger = provider.getLogger('gerbang-test', '1.0.0');
        logger.emit({
          severityNumber: SeverityNumber.ERROR,
          severityText: 'ERROR',
          body: `payment failed ${marker}`,
          attributes: { 'http.status_code': 502, user: { id: 'u-1' } },
        });
        logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: `payment ok ${marker}` });
        await provider.forceFlush();
        await provider.shutdown();

        const found = await search(marker);
        assert.equal(found.total, 2);
        const failed = found.data.find((entry: { message: string }) => entry.message.startsWith('payment failed'));
        assert.equal(failed.level, 'error');
        assert.equal(failed.service, `svc-${marker}`);
        assert.equal(failed.host, 'node-7');
        assert.equal(failed.attributes['k8s.pod.name'], 'api-1');
        assert.equal(failed.attributes['http.status_code'], 502);
        assert.equal(failed.attributes['user.id'], 'u-1');
        assert.equal(failed.attributes['otel.scope.name'], 'gerbang-test');
        assert.ok(Math.abs(Date.parse(failed['@timestamp']) - Date.now()) < HOUR);
      });
    }

    test('OTLP/JSON: trace and span ids, severity text, partial success for unreadable records', async () => {
      const marker = uniqueName('otlpjson').toLowerCase();
      const nowNs = `${BigInt(Date.now()) * 1_000_000n}`;
      const response = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: writer.headers,
        payload: {
          resourceLogs: [
            {
              resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
              scopeLogs: [
                {
                  logRecords: [
                    {
                      timeUnixNano: nowNs,
                      severityText: 'Warning',
                      body: { stringValue: `slow ${marker}` },
                      traceId: '5b8efff798038103d269b633813fc60c',
                      spanId: 'eee19b7ec3c1b174',
                      attributes: [{ key: 'n', value: { intValue: '42' } }],
                    },
                    { timeUnixNano: 'yesterday', body: { stringValue: `bad ${marker}` } },
                  ],
                },
              ],
            },
          ],
        },
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().partialSuccess.rejectedLogRecords, 1);
      const found = await search(marker);
      assert.equal(found.total, 1);
      assert.equal(found.data[0].trace_id, '5b8efff798038103d269b633813fc60c');
      assert.equal(found.data[0].span_id, 'eee19b7ec3c1b174');
      assert.equal(found.data[0].level, 'warn', 'levels are normalised: warning is warn');
      assert.equal(found.data[0].attributes.severity_text, 'warning');
      assert.equal(found.data[0].service, 'checkout');
      assert.equal(found.data[0].attributes.n, 42);
    });

    test('HTTP Basic with a logs:write user; wrong password 401; no logs:write 403; garbage protobuf 400', async () => {
      const basic = `Basic ${Buffer.from(`${writer.username}:${PASSWORD}`).toString('base64')}`;
      const ok = await logs.request({ method: 'POST', url: '/v1/logs', headers: { authorization: basic }, payload: { resourceLogs: [] } });
      assert.equal(ok.statusCode, 200);
      const wrong = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { authorization: `Basic ${Buffer.from(`${writer.username}:Nope#12345`).toString('base64')}` },
        payload: { resourceLogs: [] },
      });
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(wrong.json(), { error: 'invalid credentials' });
      const nul = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { authorization: `Basic ${Buffer.from(`${writer.username}\u0000x:${PASSWORD}`).toString('base64')}` },
        payload: { resourceLogs: [] },
      });
      assert.equal(nul.statusCode, 401);
      const reader = await logs.userWith(['logs:read']);
      const denied = await logs.request({ method: 'POST', url: '/v1/logs', headers: reader.headers, payload: { resourceLogs: [] } });
      assert.equal(denied.statusCode, 403);
      const garbage = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/x-protobuf' },
        payload: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]),
      });
      assert.equal(garbage.statusCode, 400);
      assert.equal(garbage.json().error, 'invalid json body');
      const xml = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/xml' },
        payload: '<logs/>',
      });
      assert.equal(xml.statusCode, 415);
    });

    test('Elasticsearch bulk: ES response shape, per-item errors, good documents kept', async () => {
      const marker = uniqueName('bulk').toLowerCase();
      const now = new Date().toISOString();
      const lines = [
        { index: { _index: 'app-logs' } },
        {
          '@timestamp': now,
          message: `user login ${marker}`,
          level: 'INFO',
          service: { name: 'auth' },
          host: { name: 'web-1' },
          kubernetes: { namespace: 'prod' },
        },
        { create: { _id: 'fixed-id' } },
        { time: Date.now() / 1000, log: `fluentbit line ${marker}`, stream: 'stdout' },
        'this is not json',
        '{"message":"orphan"}',
        { index: {} },
        { '@timestamp': 'not a date', message: `bad time ${marker}` },
        { delete: { _id: 'x' } },
        { index: {} },
        '{"message": broken',
      ];
      const body = `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`;
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...writer.headers, 'content-type': 'application/x-ndjson' },
        payload: body,
      });
      assert.equal(response.statusCode, 200);
      const result = response.json();
      assert.equal(result.errors, true);
      assert.equal(typeof result.took, 'number');
      const statuses = result.items.map((item: Record<string, { status: number }>) => Object.values(item)[0]!.status);
      assert.deepEqual(statuses, [201, 201, 400, 400, 400, 400]);
      assert.deepEqual(Object.keys(result.items[1]), ['create']);
      assert.equal(result.items[1].create._id, 'fixed-id');
      assert.equal(result.items[0].index._index, 'app-logs');
      assert.equal(result.items[0].index.result, 'created');
      assert.ok(result.items[2].index.error.type);
      assert.ok(result.items[4].delete.error.reason);

      const found = await search(marker, { sort: { field: '@timestamp', order: 'asc' } });
      assert.equal(found.total, 2);
      const login = found.data.find((entry: { message: string }) => entry.message.startsWith('user login'));
      assert.equal(login.level, 'info');
      assert.equal(login.service, 'auth');
      assert.equal(login.host, 'web-1');
      assert.equal(login.attributes['kubernetes.namespace'], 'prod');
      const fluent = found.data.find((entry: { message: string }) => entry.message.startsWith('fluentbit'));
      assert.equal(fluent.attributes.stream, 'stdout');
    });

    test('a document nested 9,000 levels deep fails alone in a _bulk batch; the others are stored; deep OTLP JSON is no 500', async () => {
      const marker = uniqueName('deep').toLowerCase();
      const deep = `{"message":"too deep ${marker}","nest":${'{"a":'.repeat(9_000)}1${'}'.repeat(9_000)}}`;
      const body = `{"index":{}}\n{"message":"before ${marker}"}\n{"index":{}}\n${deep}\n{"create":{}}\n{"message":"after ${marker}"}\n`;
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...writer.headers, 'content-type': 'application/x-ndjson' },
        payload: body,
      });
      assert.equal(response.statusCode, 200, response.body.slice(0, 300));
      const result = response.json();
      assert.equal(result.errors, true);
      assert.deepEqual(
        result.items.map((item: Record<string, { status: number }>) => Object.values(item)[0]!.status),
        [201, 400, 201],
      );
      assert.deepEqual(result.items[1].index.error, {
        type: 'mapper_parsing_exception',
        reason: 'the document nests deeper than 100 levels',
      });
      const found = await search(marker);
      assert.deepEqual(found.data.map((entry: { message: string }) => entry.message).sort(), [`after ${marker}`, `before ${marker}`]);

      // OTLP/JSON: a deeply nested body value is cut at a bounded depth, and a deep unknown field is harmless.
      let anyValue = '{"stringValue":"leaf"}';
      for (let i = 0; i < 1_000; i += 1) anyValue = `{"kvlistValue":{"values":[{"key":"k","value":${anyValue}}]}}`;
      const record = (body: string) =>
        `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${body}},{"body":{"stringValue":"sibling ${marker}"}}]}]}]}`;
      const otlp = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/json' },
        payload: record(anyValue),
      });
      assert.equal(otlp.statusCode, 200, otlp.body.slice(0, 300));
      const padded = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/json' },
        payload: `{"pad":${'{"a":'.repeat(9_000)}1${'}'.repeat(9_000)},${record('{"stringValue":"x"}').slice(1)}`,
      });
      assert.ok(padded.statusCode < 500, `${padded.statusCode} ${padded.body.slice(0, 200)}`);
      assert.equal((await search(`sibling ${marker}`)).total >= 1, true);
    });

    test('Elasticsearch paths shippers use: /:index/_bulk names the default index, PUT /_bulk, the version probe', async () => {
      const indexed = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/app-2026.11/_bulk',
        headers: writer.headers,
        payload: '{"create":{}}\n{"message":"indexed"}\n',
      });
      assert.equal(indexed.statusCode, 200);
      assert.equal(indexed.json().items[0].create._index, 'app-2026.11');
      const put = await logs.request({
        method: 'PUT',
        url: '/api/v1/_elastic/_bulk',
        headers: writer.headers,
        payload: '{"index":{}}\n{"message":"put"}\n',
      });
      assert.equal(put.statusCode, 200);
      const probe = await logs.request({ method: 'GET', url: '/api/v1/_elastic/', headers: writer.headers });
      assert.equal(probe.statusCode, 200);
      assert.match(probe.json().version.number, /^8\./);
      assert.equal((await logs.request({ method: 'GET', url: '/api/v1/_elastic/' })).statusCode, 401);
      const empty = await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers: writer.headers, payload: '\n' });
      assert.equal(empty.statusCode, 400);
    });

    test('levels are one set: syslog names and numbers, pino numbers and common spellings; the sent text is kept', async () => {
      const marker = uniqueName('levels').toLowerCase();
      const sent = ['warning', 'WARN', 'err', 'crit', 'Critical', 'notice', '3', '50', 'SEVERE', 'verbose', 'chatty'];
      const body = sent.map((level, i) => `{"index":{}}\n${JSON.stringify({ message: `${marker} n${i}`, severity: level })}\n`).join('');
      const stored = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...writer.headers, 'content-type': 'application/x-ndjson' },
        payload: body,
      });
      assert.equal(stored.statusCode, 200);
      const otlp = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: writer.headers,
        payload: {
          resourceLogs: [
            {
              scopeLogs: [
                {
                  logRecords: [
                    { timeUnixNano: String(Date.now() * 1e6), severityText: 'ERR', body: { stringValue: `${marker} otlp-text` } },
                    {
                      timeUnixNano: String(Date.now() * 1e6),
                      severityNumber: 13,
                      severityText: 'WARNING',
                      body: { stringValue: `${marker} otlp-number` },
                    },
                  ],
                },
              ],
            },
          ],
        },
      });
      assert.equal(otlp.statusCode, 200);
      const { data } = await search(marker);
      const byMessage = new Map(
        (data as { message: string; level: string; attributes: Record<string, unknown> }[]).map((entry) => [
          entry.message.split(' ')[1],
          entry,
        ]),
      );
      const expected = ['warn', 'warn', 'error', 'fatal', 'fatal', 'info', 'error', 'error', 'error', 'trace', 'chatty'];
      expected.forEach((level, i) => assert.equal(byMessage.get(`n${i}`)!.level, level, `sent ${sent[i]}`));
      assert.equal(byMessage.get('n0')!.attributes.severity_text, 'warning');
      assert.equal(byMessage.get('n1')!.attributes.severity_text, undefined, 'a mere case difference is not kept');
      assert.equal(byMessage.get('n6')!.attributes.severity_text, '3');
      assert.equal(byMessage.get('otlp-text')!.level, 'error');
      assert.equal(byMessage.get('otlp-number')!.level, 'warn');
      assert.equal(byMessage.get('otlp-number')!.attributes.severity_text, 'WARNING');
      // Searching by any spelling finds the one level.
      assert.equal((await search(`${marker} level:warn`)).total, 3);
      assert.equal((await search(`${marker} level:warning`)).total, 3);
      assert.equal((await search(`${marker} level:err`)).total, 5);
    });

    test('gzip bodies are accepted; bodies over the limit (after decompression) are 413; bad gzip is 400', async () => {
      const marker = uniqueName('gzipped').toLowerCase();
      const body = `{"index":{}}\n${JSON.stringify({ message: `compressed ${marker}` })}\n`;
      const ok = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...writer.headers, 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
        payload: gzipSync(body),
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal((await search(marker)).total, 1);

      const bomb = gzipSync(Buffer.alloc(1_000_000, 'a'));
      assert.ok(bomb.length < 65_536);
      const tooLarge = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...writer.headers, 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
        payload: bomb,
      });
      assert.equal(tooLarge.statusCode, 413, tooLarge.body);
      assert.equal(tooLarge.json().error.type, 'content_too_long_exception', "in Elasticsearch's shape under /_elastic");
      const plainLarge = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/json' },
        payload: `{"resourceLogs":[],"pad":"${'x'.repeat(70_000)}"}`,
      });
      assert.equal(plainLarge.statusCode, 413);
      const badGzip = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        payload: Buffer.from('not gzip at all'),
      });
      assert.equal(badGzip.statusCode, 400);
      const brotli = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { ...writer.headers, 'content-type': 'application/json', 'content-encoding': 'br' },
        payload: Buffer.from('{}'),
      });
      assert.equal(brotli.statusCode, 415);
      assert.deepEqual(brotli.json(), { error: 'unsupported content type' });
    });

    test('a gzip body without valid credentials is refused with 401 before it is inflated or parsed, on every ingestion route', async () => {
      // Inflated, this is 8 MB: far over this service's 64 KiB ingestion limit, so an inflated body would be a 413.
      const bomb = gzipSync(Buffer.alloc(8_000_000, 'a'));
      const wrongPassword = { authorization: `Basic ${Buffer.from(`${writer.username}:Wrong#Passw0rd`).toString('base64')}` };
      for (const url of ['/v1/logs', '/api/v1/_elastic/_bulk', '/v1/traces', '/v1/metrics']) {
        for (const [who, credentials] of [
          ['none', {}],
          ['wrong password', wrongPassword],
          ['bad token', { authorization: 'Bearer not-a-token' }],
        ] as const) {
          const response = await fetch(`${baseUrl}${url}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...credentials },
            body: bomb,
          });
          assert.equal(response.status, 401, `${url} with ${who}`);
          const { error } = (await response.json()) as { error: string | { type: string } };
          const text = typeof error === 'string' ? error : error.type;
          assert.match(text, url.includes('_elastic') ? /^security_exception$/ : /missing bearer token|invalid token|invalid credentials/);
        }
      }
      // Not gzip at all: still 401 (the body is never looked at), not 400.
      const garbage = await fetch(`${baseUrl}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: 'not gzip',
      });
      assert.equal(garbage.status, 401);
    });

    test('a gzip bomb from a valid shipper is 413 once it inflates past LOGS_INGEST_MAX_INFLATE_RATIO, even under the body limit', async () => {
      const roomy = await startTestLogs(dialect, { LOGS_INGEST_BODY_LIMIT: '16777216' });
      try {
        const shipper = await roomy.userWith(['logs:write']);
        const headers = { ...shipper.headers, 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' };
        // A valid 4 MB bulk body (under the 16 MiB limit) that compresses about 1000:1.
        const bomb = gzipSync(`{"index":{}}\n{"message":"${'a'.repeat(4_000_000)}"}\n`);
        const refused = await roomy.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: bomb });
        assert.equal(refused.statusCode, 413);
        assert.equal(refused.json().error.type, 'content_too_long_exception');
        const otlp = await roomy.request({
          method: 'POST',
          url: '/v1/traces',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: gzipSync(`{"resourceSpans":[],"pad":"${'a'.repeat(4_000_000)}"}`),
        });
        assert.equal(otlp.statusCode, 413);
        // An ordinary batch (varied lines, a few times smaller compressed) is accepted.
        const lines = Array.from(
          { length: 2_000 },
          (_, i) =>
            `{"index":{}}\n${JSON.stringify({ message: `request ${i} served in ${(i * 7919) % 1000} ms`, trace: (i * 2654435761).toString(16) })}\n`,
        ).join('');
        const ok = await roomy.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: gzipSync(lines) });
        assert.equal(ok.statusCode, 200, ok.body.slice(0, 200));
        assert.equal(ok.json().items.length, 2_000);
      } finally {
        await roomy.close();
      }
    });

    test('a NUL character in shipped text is stored as U+FFFD, not refused (PostgreSQL text cannot hold NUL)', async () => {
      const marker = uniqueName('nul').toLowerCase();
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: writer.headers,
        payload: `{"index":{}}\n{"message":"with nul ${marker} a\\u0000b","k\\u0000ey":"v\\u0000"}\n`,
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().errors, false);
      const found = await search(marker);
      assert.equal(found.total, 1);
      assert.ok(found.data[0].message.endsWith('a\uFFFDb'));
      assert.equal(found.data[0].attributes['k\uFFFDey'], 'v\uFFFD');
    });

    test('pipeline counters count received, stored and rejected per source', async () => {
      const before = logs.stats.snapshot('default');
      await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: writer.headers,
        payload: '{"index":{}}\n{"message":"counted"}\n{"index":{}}\nnot json\n',
      });
      const after = logs.stats.snapshot('default');
      assert.equal(after.bulk!.received - (before.bulk?.received ?? 0), 2);
      assert.equal(after.bulk!.stored - (before.bulk?.stored ?? 0), 1);
      assert.equal(after.bulk!.rejected - (before.bulk?.rejected ?? 0), 1);
      assert.ok(after.bulk!.lastIngestAt !== null);
      assert.ok(logs.stats.snapshot().otlp!.stored >= 4);
    });

    test('ingestion rate limit per tenant: 429 with Retry-After', async () => {
      const limited = await startTestLogs(dialect, { LOGS_INGEST_RATE_PER_TENANT: '2' });
      try {
        const headers = await limited.admin();
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++)
          statuses.push((await limited.request({ method: 'POST', url: '/v1/logs', headers, payload: { resourceLogs: [] } })).statusCode);
        assert.deepEqual(statuses, [200, 200, 429]);
        const last = await limited.request({ method: 'POST', url: '/v1/logs', headers, payload: { resourceLogs: [] } });
        assert.ok(Number(last.headers['retry-after']) >= 1);
      } finally {
        await limited.close();
      }
    });
  });
}
