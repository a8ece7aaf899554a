import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportEnvelope, logRecordJson, SEVERITY, spanJson } from '../../src/gateway/modules/telemetry/otlp-json.js';
import { RecordQueue } from '../../src/gateway/modules/telemetry/record-queue.js';
import { formatTraceparent, parseTraceparent, sampledByRatio } from '../../src/gateway/modules/telemetry/trace-context.js';

/** The gateway's own OTLP/JSON encoding, W3C trace context and send queue, below the HTTP tests. */
describe('gateway telemetry encoding', () => {
  test('traceparent: a valid header is continued; malformed, all-zero and version ff headers start a new trace', () => {
    const parent = parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'vendor=a');
    assert.deepEqual(parent, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      sampled: true,
      traceState: 'vendor=a',
    });
    assert.equal(
      parseTraceparent(['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00', 'x'], undefined)?.sampled,
      false,
      'first of repeated headers',
    );
    assert.ok(
      parseTraceparent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-later', undefined),
      'a future version may append fields',
    );
    for (const bad of [
      '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01', // upper case
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra', // version 00 has exactly four fields
      '00-0af7651916cd43dd-b7ad6b7169203331-01',
      '"><script>',
    ])
      assert.equal(parseTraceparent(bad, undefined), undefined, bad);
    assert.equal(
      parseTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x'.repeat(600))?.traceState,
      undefined,
      'an oversized tracestate is not passed on',
    );
    assert.equal(
      formatTraceparent('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', false),
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00',
    );
  });

  test('sampling by trace id: 0 and 1 are absolute, a ratio keeps about that share, the same id always decides the same', () => {
    const ids = Array.from({ length: 4000 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n).toString(16).padStart(32, '0').slice(-32));
    assert.ok(ids.every((id) => sampledByRatio(id, 1)) && !ids.some((id) => sampledByRatio(id, 0)));
    const share = ids.filter((id) => sampledByRatio(id, 0.25)).length / ids.length;
    assert.ok(share > 0.15 && share < 0.35, `share ${share}`);
    assert.ok(ids.every((id) => sampledByRatio(id, 0.25) === sampledByRatio(id, 0.25)));
  });

  test('records are OTLP/JSON: strings escaped, integers and doubles typed, absent attributes left out', () => {
    const { head, tail } = exportEnvelope('logs', { 'service.name': 'gw' }, 'scope');
    const record = logRecordJson({
      timeNanos: '1700000000000000001',
      severity: SEVERITY.WARN,
      body: 'GET /a"b\\c\u0000 404',
      attributes: { status: 404, ms: 1.5, ok: false, path: '/a"b', missing: undefined },
      trace: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: false },
    });
    const parsed = JSON.parse(`${head}${record}${tail}`);
    const lr = parsed.resourceLogs[0].scopeLogs[0].logRecords[0];
    assert.equal(parsed.resourceLogs[0].resource.attributes[0].value.stringValue, 'gw');
    assert.equal(lr.body.stringValue, 'GET /a"b\\c\u0000 404');
    assert.deepEqual(lr.attributes, [
      { key: 'status', value: { intValue: 404 } },
      { key: 'ms', value: { doubleValue: 1.5 } },
      { key: 'ok', value: { boolValue: false } },
      { key: 'path', value: { stringValue: '/a"b' } },
    ]);
    assert.equal(lr.timeUnixNano, '1700000000000000001');
    assert.equal(lr.flags, 0);
    const span = JSON.parse(
      spanJson({
        traceId: 'a'.repeat(32),
        spanId: 'b'.repeat(16),
        parentSpanId: undefined,
        name: 'GET "x"',
        kind: 2,
        startNanos: '1',
        endNanos: '2',
        attributes: {},
        status: { code: 2, message: 'reset' },
      }),
    );
    assert.equal(span.name, 'GET "x"');
    assert.equal(span.parentSpanId, undefined);
    assert.deepEqual(span.status, { code: 2, message: 'reset' });
  });

  test('the queue: batches of at most maxBatch in one request body each, drops past its bound, keeps a failed batch for the next send', async () => {
    const bodies: unknown[] = [];
    let fail = false;
    const queue = new RecordQueue({
      maxQueue: 5,
      maxBatch: 2,
      intervalMs: 3_600_000,
      envelope: { head: '{"items":[', tail: ']}' },
      send: async (body) => {
        if (fail) throw new Error('down');
        bodies.push(JSON.parse(body.toString()));
      },
    });
    for (let i = 0; i < 7; i++) queue.push(JSON.stringify({ i, text: 'é\u2028' }));
    assert.deepEqual(queue.stats(), { queued: 5, sent: 0, dropped: 2, failedBatches: 0 });
    fail = true;
    await queue.flush();
    assert.deepEqual(queue.stats(), { queued: 5, sent: 0, dropped: 2, failedBatches: 1 });
    fail = false;
    await queue.close();
    assert.deepEqual(bodies, [
      {
        items: [
          { i: 0, text: 'é\u2028' },
          { i: 1, text: 'é\u2028' },
        ],
      },
      {
        items: [
          { i: 2, text: 'é\u2028' },
          { i: 3, text: 'é\u2028' },
        ],
      },
      { items: [{ i: 4, text: 'é\u2028' }] },
    ]);
    assert.deepEqual(queue.stats(), { queued: 0, sent: 5, dropped: 2, failedBatches: 1 });
  });

  test('a record larger than a batch buffer is sent whole in a batch of its own', async () => {
    const bodies: string[] = [];
    const queue = new RecordQueue({
      maxQueue: 10,
      maxBatch: 10,
      intervalMs: 3_600_000,
      envelope: { head: '[', tail: ']' },
      send: async (body) => void bodies.push(body.toString()),
    });
    const big = JSON.stringify('x'.repeat(2 * 1024 * 1024));
    queue.push('1');
    queue.push(big);
    queue.push('2');
    await queue.close();
    assert.deepEqual(
      bodies.map((body) => JSON.parse(body).length),
      [1, 1, 1],
    );
    assert.equal(JSON.parse(bodies[1]!)[0].length, 2 * 1024 * 1024);
  });
});
