import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { eventually } from '../helpers/eventually.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../helpers/logs.js';
import { seedAuditTrail, startLogsUnderFault, type LogsUnderFault } from '../helpers/logs-fault-fixture.js';
import { readFirstChunkThenDestroy, requestHead, sendThenClose } from '../helpers/raw-http.js';
import { root } from '../../src/logs/modules/ingest/otlp-proto.js';

/**
 * Fault suite, logs service: clients that leave while the service is working for them (an export
 * streaming, a long search, a login hashing its password). After each case the real process still
 * answers, and its descriptors and memory come back down. Each case is repeated so that a leak of one
 * descriptor per client would show beyond the probe's slack.
 */

const AUDIT_ROWS = 30_000;
const STORE_ENTRIES = 20_000;
const REPEAT = 6;
/** Events in each body of the upload cases. */
const DOCS = 2000;
const LogsRequest = root.lookupType('otlp.ExportLogsServiceRequest');

for (const dialect of DIALECTS) {
  describe(`logs faults: clients that leave [${dialect}]`, () => {
    let logs: LogsUnderFault;
    before(async () => {
      logs = await startLogsUnderFault(dialect);
      await seedAuditTrail(logs.database.url, AUDIT_ROWS);
      // A store large enough that a query over all of it is long: words w0..w99, an attribute to sort by.
      for (let batch = 0; batch < STORE_ENTRIES / 5000; batch += 1) {
        const lines = Array.from({ length: 5000 }, (_, i) => {
          const n = batch * 5000 + i;
          return `{"index":{}}\n${JSON.stringify({ message: `generated entry w${n % 100} w${(n * 7) % 100} number ${n}`, level: n % 3 ? 'info' : 'error', rank: (n * 7919) % 10007 })}`;
        });
        const response = await logs.call('POST', '/api/v1/_elastic/_bulk', {
          headers: { authorization: logs.admin, 'content-type': 'application/x-ndjson' },
          body: `${lines.join('\n')}\n`,
        });
        assert.equal(response.status, 200, response.body.toString());
      }
    });
    after(async () => logs?.close());

    const prematureCloses = () => logs.logLines().filter((line) => line.msg === 'stream closed prematurely').length;

    for (const [format, path] of [
      ['CSV', '/api/v1/log-audit/export/csv'],
      ['XLSX', '/api/v1/log-audit/export/excel'],
    ] as const) {
      test(`a client that leaves the ${format} audit export after its first chunk: the stream stops, the service keeps serving, nothing leaks`, async () => {
        const baseline = logs.baseline();
        const closesBefore = prematureCloses();
        for (let i = 0; i < REPEAT; i += 1) {
          const { status, firstChunkBytes } = await readFirstChunkThenDestroy(logs.port, path, { authorization: logs.admin });
          assert.equal(status, 200);
          assert.ok(firstChunkBytes > 0);
        }
        // The service saw every client leave mid-stream (its log says so) and stopped writing.
        await eventually(async () => assert.equal(prematureCloses() - closesBefore, REPEAT));
        await logs.stillServes(baseline);
        // A whole export still works afterwards.
        const whole = await logs.call('GET', `${path}?actor=nobody-at-all`, { headers: { authorization: logs.admin } });
        assert.equal(whole.status, 200);
        assert.ok(whole.body.length > 0 && !whole.aborted);
      });
    }

    test('a client that leaves a long search before its answer: the service keeps serving, nothing leaks', async () => {
      const baseline = logs.baseline();
      // Many prefixes OR-ed over the whole store, sorted by an attribute and counted exactly: every entry is read and sorted.
      const query = Array.from({ length: 90 }, (_, i) => `w${i}*`).join(' OR ');
      const body = JSON.stringify({
        query,
        sort: { field: 'rank', order: 'asc' },
        limit: 1000,
        page: 3,
        trackTotal: true,
        timeRange: { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() },
      });
      const head = requestHead('POST', '/api/v1/logs/list/paginate', {
        authorization: logs.admin,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      await Promise.all(Array.from({ length: REPEAT }, () => sendThenClose(logs.port, head, body)));
      await logs.stillServes(baseline);
      // The same search, waited for, still answers in full.
      const answered = await logs.call('POST', '/api/v1/logs/list/paginate', {
        headers: { authorization: logs.admin, 'content-type': 'application/json' },
        body,
      });
      assert.equal(answered.status, 200, answered.body.toString());
      assert.equal((JSON.parse(answered.body.toString()) as { total: number }).total, STORE_ENTRIES);
    });

    // `_bulk` and OTLP logs wait their turn for the writer together (pipeline.ts LogBatches).
    const uploads = [
      {
        name: '`_bulk`',
        marker: 'leftbulk',
        path: '/api/v1/_elastic/_bulk',
        contentType: 'application/x-ndjson',
        body: (marker: string) =>
          `${Array.from({ length: DOCS }, (_, n) => `{"index":{}}\n{"message":"${marker} entry ${n}","level":"info"}`).join('\n')}\n`,
      },
      {
        name: 'OTLP logs (protobuf)',
        marker: 'leftotlp',
        path: '/v1/logs',
        contentType: 'application/x-protobuf',
        body: (marker: string) =>
          Buffer.from(
            LogsRequest.encode({
              resourceLogs: [
                {
                  scopeLogs: [
                    {
                      logRecords: Array.from({ length: DOCS }, (_, n) => ({
                        severityNumber: 9,
                        body: { stringValue: `${marker} entry ${n}` },
                      })),
                    },
                  ],
                },
              ],
            }).finish(),
          ),
      },
    ];
    for (const upload of uploads) {
      test(`a client that sends a whole ${upload.name} body and leaves before the answer: its events are stored, the service keeps serving, nothing leaks`, async () => {
        const baseline = logs.baseline();
        const linesBefore = logs.logLines().length;
        const markers = Array.from({ length: REPEAT }, (_, i) => `${upload.marker}${i}x${Date.now()}`);
        await Promise.all(
          markers.map((marker) => {
            const body = upload.body(marker);
            const head = requestHead('POST', upload.path, {
              authorization: logs.admin,
              'content-type': upload.contentType,
              'content-length': Buffer.byteLength(body),
            });
            return sendThenClose(logs.port, head, body);
          }),
        );
        // Acknowledged or not, a batch received whole is written whole (docs/reliability.md: a retry may store it twice, never half).
        for (const marker of markers) {
          await eventually(async () => {
            const found = await logs.call('POST', '/api/v1/logs/list/paginate', {
              headers: { authorization: logs.admin, 'content-type': 'application/json' },
              body: JSON.stringify({ query: marker, limit: 1, trackTotal: true }),
            });
            assert.equal(found.status, 200, found.body.toString());
            assert.equal((JSON.parse(found.body.toString()) as { total: number }).total, DOCS, marker);
          });
        }
        // Every request has its last line in the operator's log: `request abandoned` (as nginx's 499) when
        // the service saw the client gone before it answered, `request completed` if it answered first.
        await eventually(async () => {
          const lines = logs.logLines().slice(linesBefore);
          const started = lines.filter((line) => line.msg === 'incoming request' && (line.req as { path?: string }).path === upload.path);
          assert.equal(started.length, REPEAT);
          for (const request of started) {
            const ends = lines.filter((line) => line.reqId === request.reqId && /^request (abandoned|completed)/.test(String(line.msg)));
            assert.equal(ends.length, 1, `the end of ${String(request.reqId)}`);
          }
        });
        await logs.stillServes(baseline);
      });
    }

    test('a client that leaves during login (argon2 running): the service keeps serving, the next login works', async () => {
      const baseline = logs.baseline();
      const body = JSON.stringify({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD });
      const head = requestHead('POST', '/api/login', { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      const wrong = JSON.stringify({ username: LOGS_ADMIN, password: 'Wrong#Passw0rd' });
      const wrongHead = requestHead('POST', '/api/login', {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(wrong),
      });
      await Promise.all(
        Array.from({ length: REPEAT }, (_, i) =>
          i % 2 ? sendThenClose(logs.port, head, body) : sendThenClose(logs.port, wrongHead, wrong),
        ),
      );
      await logs.stillServes(baseline);
      const login = await logs.call('POST', '/api/login', { headers: { 'content-type': 'application/json' }, body });
      assert.equal(login.status, 200, login.body.toString());
    });
  });
}
