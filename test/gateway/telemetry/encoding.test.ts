import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import protobuf from 'protobufjs';
import {
  accessLineBound,
  logRecordBound,
  otlpEnvelope,
  SEVERITY,
  SPAN_KIND,
  spanBound,
  writeAccessLine,
  writeLogRecord,
  writeSpan,
  type SpanIds,
  type SpanRecord,
} from '../../../src/gateway/modules/telemetry/otlp-records.js';
import { ProtoWriter } from '../../../src/gateway/modules/telemetry/proto-writer.js';
import { RecordQueue } from '../../../src/gateway/modules/telemetry/record-queue.js';
import {
  hexWord,
  parseTraceparent,
  sampledByRatio,
  samplingOf,
  traceparentOf,
} from '../../../src/gateway/modules/telemetry/trace-context.js';
import { logsMessages } from '../../../src/logs/modules/ingest/otlp-proto.js';
import { tracesMessages } from '../../../src/logs/modules/ingest/otlp-proto-telemetry.js';

/** Words of a hex trace id and span id, as a span holds them. */
const idsOf = (traceId: string, spanId: string, sampled = true): SpanIds => ({
  t0: hexWord(traceId, 0),
  t1: hexWord(traceId, 1),
  t2: hexWord(traceId, 2),
  t3: hexWord(traceId, 3),
  s0: hexWord(spanId, 0),
  s1: hexWord(spanId, 1),
  sampled,
});

/** Milliseconds since the epoch as the decimal nanoseconds OTLP carries, computed with BigInt. */
const nanosOf = (ms: number): string => {
  const whole = Math.floor(ms);
  return String(BigInt(whole) * 1_000_000n + BigInt(Math.floor((ms - whole) * 1e6)));
};

/** A decoded export with bytes (trace and span ids) as hex. */
const hex = (value: unknown): any =>
  value instanceof Uint8Array
    ? Buffer.from(value).toString('hex')
    : Array.isArray(value)
      ? value.map(hex)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hex(v)]))
        : value;

const RESOURCE = { 'service.name': 'gw', 'service.namespace': 'gerbang' };

/** The request bodies a queue sends of what `fill` writes (copied: the queue reuses its buffers). */
async function bodiesOf(fill: (queue: RecordQueue) => void, options: { maxQueue?: number; maxBatch?: number } = {}): Promise<Buffer[]> {
  const bodies: Buffer[] = [];
  const queue = new RecordQueue({
    maxQueue: options.maxQueue ?? 100,
    maxBatch: options.maxBatch ?? 100,
    intervalMs: 3_600_000,
    envelope: otlpEnvelope(RESOURCE, 'scope'),
    send: async (body) => void bodies.push(Buffer.from(body)),
  });
  fill(queue);
  await queue.close();
  return bodies;
}

/** The records of a logs export, after checking its resource and scope. */
function logRecords(body: Buffer): any[] {
  const decoded = hex(logsMessages.decode(body));
  assert.equal(decoded.resourceLogs.length, 1);
  const [resourceLogs] = decoded.resourceLogs;
  assert.deepEqual(resourceLogs.resource, {
    attributes: [
      { key: 'service.name', value: { stringValue: 'gw' } },
      { key: 'service.namespace', value: { stringValue: 'gerbang' } },
    ],
  });
  assert.equal(resourceLogs.scopeLogs.length, 1);
  assert.deepEqual(resourceLogs.scopeLogs[0].scope, { name: 'scope' });
  return resourceLogs.scopeLogs[0].logRecords;
}

function spans(body: Buffer): any[] {
  const decoded = hex(tracesMessages.decode(body));
  assert.equal(decoded.resourceSpans.length, 1);
  assert.equal(decoded.resourceSpans[0].resource.attributes[0].value.stringValue, 'gw');
  assert.deepEqual(decoded.resourceSpans[0].scopeSpans[0].scope, { name: 'scope' });
  return decoded.resourceSpans[0].scopeSpans[0].spans;
}

/** Writes one record through the queue's writer, as the telemetry does. */
function put(queue: RecordQueue, bound: number, write: (w: ProtoWriter) => void): void {
  const w = queue.write(bound);
  if (w === undefined) return;
  write(w);
  queue.commit();
}

/** The gateway's own OTLP/protobuf encoding, W3C trace context and send queue, below the HTTP tests. */
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
      traceparentOf(idsOf('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', false)),
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00',
    );
    assert.equal(
      traceparentOf(idsOf('f0f7651916cd43dd8448eb211c8031ff', 'ffad6b71692033ff')),
      '00-f0f7651916cd43dd8448eb211c8031ff-ffad6b71692033ff-01',
      'words with the high bit set (negative int32) come back as the same hex',
    );
  });

  test('sampling by trace id: 0 and 1 are absolute, a ratio keeps about that share, the same id always decides the same', () => {
    const ids = Array.from({ length: 4000 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n).toString(16).padStart(32, '0').slice(-32));
    assert.ok(ids.every((id) => sampledByRatio(id, 1)) && !ids.some((id) => sampledByRatio(id, 0)));
    const share = ids.filter((id) => sampledByRatio(id, 0.25)).length / ids.length;
    assert.ok(share > 0.15 && share < 0.35, `share ${share}`);
    assert.ok(ids.every((id) => sampledByRatio(id, 0.25) === sampledByRatio(id, 0.25)));
  });

  test('sampling as OpenTelemetry states it: the randomness in the last 56 bits of the id against a threshold, written as ot=th', () => {
    // Threshold of 0.25: 0.75 * 2^16 = 0xc000, "c". Bits 55-40 of the randomness are bytes 9 and 10 of the id.
    assert.deepEqual(samplingOf(0.25), { threshold: 0xc000, traceState: 'ot=th:c' });
    assert.deepEqual(samplingOf(0.1), { threshold: 0xe666, traceState: 'ot=th:e666' });
    assert.deepEqual(samplingOf(1), { threshold: 0, traceState: undefined }, 'every trace: counted once, nothing to say');
    assert.equal(samplingOf(0).threshold, 65_536, 'none');
    assert.equal(sampledByRatio('ffffffffffffffff00c0000000000000', 0.25), true, 'randomness 0xc000... is at the threshold');
    assert.equal(sampledByRatio('ffffffffffffffff00bfffffffffffff', 0.25), false, 'just below it');
    assert.equal(sampledByRatio('0000000000000000ffbfffffffffffff', 0.25), false, 'byte 8 is not part of the randomness');
  });

  test('the wire primitives: varints, int64, nanoseconds from milliseconds, strings, as protobufjs reads them', () => {
    const w = new ProtoWriter(Buffer.alloc(4096));
    const unsigned = [0, 1, 127, 128, 16_383, 16_384, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1];
    const signed = [-1, -128, -(2 ** 31), -(2 ** 32) - 1, -(2 ** 53) + 1];
    const times = [0, 1.5, 1_700_000_000_123.5, 1_700_000_000_123.000_976_5625, 2 ** 42 + 0.25, 4_102_444_800_000.999];
    for (const value of unsigned) w.varint(value);
    for (const value of signed) w.int64(value);
    for (const ms of times) w.nanosFromMs(ms);
    const texts = ['', 'abc', 'é', '€', '😀', 'a\ud800b', '\udc00', 'x\ud83d', 'é'.repeat(70)];
    for (const text of texts) w.string(0x0a, text);
    const reader = protobuf.Reader.create(w.buf.subarray(0, w.pos));
    // protobufjs reads 64-bit integers as a Long ({ low, high }) or, without the long package, a number.
    const decimal = (value: number | { low: number; high: number }, signed = false) =>
      typeof value === 'number'
        ? String(value)
        : String((signed ? BigInt.asIntN : BigInt.asUintN)(64, (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0)));
    for (const value of unsigned) assert.equal(decimal(reader.uint64()), String(value));
    for (const value of signed) assert.equal(decimal(reader.int64(), true), String(value));
    for (const ms of times) assert.equal(decimal(reader.fixed64()), nanosOf(ms), `nanoseconds of ${ms}`);
    for (const text of texts) {
      assert.equal(reader.uint32(), 0x0a);
      assert.equal(reader.string(), Buffer.from(text).toString(), `${JSON.stringify(text)}, lone surrogates as U+FFFD`);
    }
    assert.equal(reader.pos, w.pos);
  });

  test('a string cut short at the end of the buffer moves the position past the end, where the queue sees it', () => {
    for (const text of ['abcdef', '€€€', 'ab😀']) {
      const w = new ProtoWriter(Buffer.alloc(8), 4);
      w.text(text);
      assert.ok(w.pos > w.buf.length, `${text}: ${w.pos}`);
      w.text(text); // already past the end: nothing written, no throw
      assert.ok(w.pos > w.buf.length);
    }
    const fits = new ProtoWriter(Buffer.alloc(16), 4);
    fits.text('€€');
    assert.equal(fits.pos, 10);
    assert.equal(fits.buf.subarray(4, 10).toString(), '€€');
  });

  test('an access line is an OTLP LogRecord: body, severity, typed attributes, trace and span id bytes, the sampled flag, its time', async () => {
    const traceId = 'f0f7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    const at = 1234.5; // performance.now() at the end of the request
    const odd = 'GET /a"b\\c\u0000é😀';
    const longPath = `/api/v1/master-data/${'ж'.repeat(150)}`; // lengths past one varint byte
    const [body] = await bodiesOf((queue) => {
      const request = { method: 'GET', route: '/api/v1/master-data/*' };
      const response = {
        status: 404,
        durationMs: 1.23456,
        requestId: 'req-1',
        clientAddress: '10.0.0.1',
        userId: 'user-1',
        service: 'master-data',
      };
      const path = '/a"b\\c\u0000é😀';
      put(queue, accessLineBound(request, path, response), (w) => writeAccessLine(w, request, path, response, at, idsOf(traceId, spanId)));
      const plain = { status: 200, durationMs: 2, requestId: 'req-2', clientAddress: undefined };
      put(queue, accessLineBound(request, longPath, plain), (w) =>
        writeAccessLine(w, request, longPath, plain, at, idsOf(traceId, spanId, false)),
      );
      const failed = { status: 503, durationMs: 0.5, requestId: 'req-3', clientAddress: '' };
      put(queue, accessLineBound(request, '/x', failed), (w) => writeAccessLine(w, request, '/x', failed, at, undefined));
    });
    const time = nanosOf(performance.timeOrigin + at);
    const [first, second, third] = logRecords(body!);
    assert.deepEqual(first, {
      timeUnixNano: time,
      observedTimeUnixNano: time,
      severityNumber: 13,
      severityText: 'WARN',
      body: { stringValue: `${odd} 404` },
      attributes: [
        { key: 'log.type', value: { stringValue: 'access' } },
        { key: 'http.request.method', value: { stringValue: 'GET' } },
        { key: 'http.route', value: { stringValue: '/api/v1/master-data/*' } },
        { key: 'gerbang.service', value: { stringValue: 'master-data' } },
        { key: 'url.path', value: { stringValue: '/a"b\\c\u0000é😀' } },
        { key: 'http.response.status_code', value: { intValue: '404' } },
        { key: 'duration_ms', value: { doubleValue: 1.235 } },
        { key: 'request_id', value: { stringValue: 'req-1' } },
        { key: 'client.address', value: { stringValue: '10.0.0.1' } },
        { key: 'user.id', value: { stringValue: 'user-1' } },
      ],
      flags: 1,
      traceId,
      spanId,
    });
    assert.equal(second.body.stringValue, `GET ${longPath} 200`);
    assert.equal(second.severityText, 'INFO');
    assert.equal(second.flags, undefined, 'not sampled: flags 0 (left out, as protobuf does)');
    assert.equal(second.traceId, traceId, 'an unsampled request still names its trace');
    assert.deepEqual(
      second.attributes.map((a: any) => a.key),
      ['log.type', 'http.request.method', 'http.route', 'url.path', 'http.response.status_code', 'duration_ms', 'request_id'],
      'absent and empty values are left out',
    );
    assert.deepEqual(second.attributes[5], { key: 'duration_ms', value: { intValue: '2' } }, 'a whole duration is an integer');
    assert.equal(third.severityNumber, 17);
    assert.equal(third.traceId, undefined);
    assert.equal(third.spanId, undefined);
  });

  test('an audit record: every attribute type, negative and large integers, non-finite doubles as 0', async () => {
    const attributes = {
      'log.type': 'audit',
      text: 'line\n"two"',
      status: 404,
      negative: -5,
      large: 2 ** 40,
      ratio: 1.5,
      infinite: Number.POSITIVE_INFINITY,
      ok: false,
      yes: true,
      missing: undefined,
    };
    const [body] = await bodiesOf((queue) =>
      put(queue, logRecordBound('auth.login failure', attributes), (w) =>
        writeLogRecord(w, Date.UTC(2026, 10, 25, 1, 2, 3, 456), SEVERITY.WARN, 'auth.login failure', attributes),
      ),
    );
    const [record] = logRecords(body!);
    assert.deepEqual(record, {
      timeUnixNano: '1795568523456000000',
      observedTimeUnixNano: '1795568523456000000',
      severityNumber: 13,
      severityText: 'WARN',
      body: { stringValue: 'auth.login failure' },
      attributes: [
        { key: 'log.type', value: { stringValue: 'audit' } },
        { key: 'text', value: { stringValue: 'line\n"two"' } },
        { key: 'status', value: { intValue: '404' } },
        { key: 'negative', value: { intValue: '-5' } },
        { key: 'large', value: { intValue: String(2 ** 40) } },
        { key: 'ratio', value: { doubleValue: 1.5 } },
        { key: 'infinite', value: { doubleValue: 0 } },
        { key: 'ok', value: { boolValue: false } },
        { key: 'yes', value: { boolValue: true } },
      ],
    });
    assert.equal(Date.UTC(2026, 10, 25, 1, 2, 3, 456), 1795568523456);
  });

  test('spans: ids as bytes, parent, name, kind, times, attributes, error status with its message', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const server: SpanRecord = {
      ...idsOf(traceId, 'f0f067aa0ba902b7'),
      p0: hexWord('00f067aa0ba90200', 0),
      p1: hexWord('00f067aa0ba90200', 1),
      kind: SPAN_KIND.server,
      method: 'POST',
      route: '/api/v1/keuangan/*',
      path: '/api/v1/keuangan/gaji',
      service: 'keuangan',
      statusCode: 503,
      failed: true,
      failure: undefined,
      startAt: 1000.25,
      endAt: 1003.125,
      recordedState: undefined,
    };
    const client: SpanRecord = {
      ...idsOf(traceId, '1111111111111111'),
      p0: server.s0,
      p1: server.s1,
      kind: SPAN_KIND.client,
      method: 'POST',
      route: '',
      path: '',
      service: 'keuangan',
      statusCode: 0,
      failed: true,
      failure: 'timeout',
      startAt: 1000.5,
      endAt: 1003,
      recordedState: undefined,
    };
    const root: SpanRecord = {
      ...idsOf(traceId, '2222222222222222'),
      p0: 0,
      p1: 0,
      kind: SPAN_KIND.server,
      method: 'GET',
      route: '',
      path: '/nothing',
      service: undefined,
      statusCode: 404,
      failed: false,
      failure: undefined,
      startAt: 1,
      endAt: 2,
      recordedState: 'ot=th:e666',
    };
    const [body] = await bodiesOf((queue) => {
      for (const span of [server, client, root]) put(queue, spanBound(span), (w) => writeSpan(w, span));
    });
    const [s, c, r] = spans(body!);
    assert.deepEqual(s, {
      traceId,
      spanId: 'f0f067aa0ba902b7',
      parentSpanId: '00f067aa0ba90200',
      name: 'POST /api/v1/keuangan/*',
      kind: 2,
      startTimeUnixNano: nanosOf(performance.timeOrigin + 1000.25),
      endTimeUnixNano: nanosOf(performance.timeOrigin + 1003.125),
      attributes: [
        { key: 'http.request.method', value: { stringValue: 'POST' } },
        { key: 'http.route', value: { stringValue: '/api/v1/keuangan/*' } },
        { key: 'gerbang.service', value: { stringValue: 'keuangan' } },
        { key: 'url.path', value: { stringValue: '/api/v1/keuangan/gaji' } },
        { key: 'http.response.status_code', value: { intValue: '503' } },
      ],
      status: { code: 2 },
    });
    assert.deepEqual(c, {
      traceId,
      spanId: '1111111111111111',
      parentSpanId: 'f0f067aa0ba902b7',
      name: 'POST keuangan',
      kind: 3,
      startTimeUnixNano: nanosOf(performance.timeOrigin + 1000.5),
      endTimeUnixNano: nanosOf(performance.timeOrigin + 1003),
      attributes: [
        { key: 'peer.service', value: { stringValue: 'keuangan' } },
        { key: 'http.request.method', value: { stringValue: 'POST' } },
      ],
      status: { code: 2, message: 'timeout' },
    });
    assert.equal(r.traceState, 'ot=th:e666', 'the sampling threshold it was recorded by');
    assert.equal(r.parentSpanId, undefined, 'a root span has no parent');
    assert.equal(r.name, 'GET unmatched');
    assert.equal(r.status, undefined, 'unset status (code 0) is left out');
    assert.deepEqual(r.attributes[1], { key: 'http.route', value: { stringValue: '' } });
  });

  test('repeated values are encoded once and copied: the same bytes for every record, past the cache bound and for long values', async () => {
    const request = { method: 'GET', route: '/api/v1/master-data/*' };
    const responseOf = (i: number) => ({
      status: 200,
      durationMs: 1,
      requestId: `req-${i}`,
      // Past the caches' bound of 1,000 values (they start over), and a value too long to cache.
      clientAddress: `10.0.${i % 7}.${i % 1500}`,
      userId: i % 100 === 0 ? `u-${'x'.repeat(2000)}` : `user-${i % 1300}`,
      service: i % 2 ? 'master-data' : undefined,
    });
    const count = 3000;
    const bodies = await bodiesOf(
      (queue) => {
        for (let i = 0; i < count; i++) {
          const response = responseOf(i);
          put(queue, accessLineBound(request, '/p', response), (w) => writeAccessLine(w, request, '/p', response, 1, undefined));
        }
      },
      { maxQueue: count, maxBatch: 500 },
    );
    const records = bodies.flatMap(logRecords);
    assert.equal(records.length, count);
    records.forEach((record, i) => {
      const { clientAddress, userId, service } = responseOf(i);
      const attributes = Object.fromEntries(record.attributes.map((a: any) => [a.key, a.value.stringValue ?? a.value.intValue]));
      assert.deepEqual(
        [attributes['request_id'], attributes['client.address'], attributes['user.id'], attributes['gerbang.service']],
        [`req-${i}`, clientAddress, userId, service],
        `record ${i}`,
      );
    });
  });

  test('the queue: batches of at most maxBatch in one request body each, drops past its bound, keeps a failed batch for the next send', async () => {
    const bodies: Buffer[] = [];
    let fail = false;
    const queue = new RecordQueue({
      maxQueue: 5,
      maxBatch: 2,
      intervalMs: 3_600_000,
      envelope: otlpEnvelope(RESOURCE, 'scope'),
      send: async (body) => {
        if (fail) throw new Error('down');
        bodies.push(Buffer.from(body));
      },
    });
    const attributes = { i: 0, text: 'é\u2028' };
    for (let i = 0; i < 7; i++) {
      attributes.i = i;
      put(queue, logRecordBound('r', attributes), (w) => writeLogRecord(w, 1, SEVERITY.INFO, `record ${i}`, attributes));
    }
    assert.deepEqual(queue.stats(), { queued: 5, sent: 0, dropped: 2, failedBatches: 0 });
    fail = true;
    await queue.flush();
    assert.deepEqual(queue.stats(), { queued: 5, sent: 0, dropped: 2, failedBatches: 1 });
    fail = false;
    await queue.close();
    assert.deepEqual(
      bodies.map((body) => logRecords(body).map((r) => r.body.stringValue)),
      [['record 0', 'record 1'], ['record 2', 'record 3'], ['record 4']],
    );
    assert.deepEqual(logRecords(bodies[2]!)[0].attributes[1], { key: 'text', value: { stringValue: 'é\u2028' } });
    assert.deepEqual(queue.stats(), { queued: 0, sent: 5, dropped: 2, failedBatches: 1 });
  });

  test('a full batch is sent at once, the rest at the interval; none while backing off after a failure', async () => {
    const sent: number[] = [];
    let fail = true;
    const queue = new RecordQueue({
      maxQueue: 100,
      maxBatch: 3,
      intervalMs: 3_600_000,
      envelope: otlpEnvelope(RESOURCE, 'scope'),
      send: async (_body, count) => {
        if (fail) throw new Error('down');
        sent.push(count);
      },
    });
    const record = () => put(queue, logRecordBound('r', {}), (w) => writeLogRecord(w, 1, SEVERITY.INFO, 'r', {}));
    const settled = () => new Promise((resolve) => setTimeout(resolve, 20));
    for (let i = 0; i < 3; i++) record();
    await settled();
    assert.deepEqual(queue.stats().failedBatches, 1, 'the full batch went at once (and failed)');
    for (let i = 0; i < 3; i++) record();
    await settled();
    assert.equal(queue.stats().failedBatches, 1, 'backing off: the next full batch waits for the timer');
    fail = false;
    await queue.flush();
    await settled();
    assert.deepEqual(sent, [3, 3], 'after a success, the full batch waiting goes at once');
    record();
    await settled();
    assert.deepEqual(sent, [3, 3], 'a partial batch waits for the interval');
    await queue.close();
    assert.deepEqual(sent, [3, 3, 1]);
  });

  test('a batch also ends when its buffer is full, and then goes at once', async () => {
    const sent: number[] = [];
    const queue = new RecordQueue({
      maxQueue: 100,
      maxBatch: 100,
      intervalMs: 3_600_000,
      envelope: otlpEnvelope(RESOURCE, 'scope'),
      send: async (_body, count) => void sent.push(count),
    });
    // 160 KB records, each written against a bound of three times that, in 1 MiB buffers: four fit.
    const text = 'x'.repeat(160_000);
    for (let i = 0; i < 5; i++) put(queue, logRecordBound(text, {}), (w) => writeLogRecord(w, 1, SEVERITY.INFO, text, {}));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(sent, [4]);
    await queue.close();
    assert.deepEqual(sent, [4, 1]);
  });

  test('a record larger than a batch buffer is sent whole, in a larger buffer made for it', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const bodies = await bodiesOf(
      (queue) => {
        for (const text of ['1', big, '2']) put(queue, logRecordBound(text, {}), (w) => writeLogRecord(w, 1, SEVERITY.INFO, text, {}));
      },
      { maxBatch: 10 },
    );
    assert.deepEqual(
      bodies.map((body) => logRecords(body).map((r) => r.body.stringValue.length)),
      [[1], [2 * 1024 * 1024, 1]],
    );
  });

  test('a record that runs past its buffer, or fails while written, is dropped and counted, never sent torn', async () => {
    const bodies = await bodiesOf((queue) => {
      // A bound that is too small, at the end of a fresh batch buffer: the record runs past it.
      const w = queue.write(1024 * 1024 - 200)!;
      for (let i = 0; i < 1024 * 1024 + 10; i++) w.byte(0x41);
      queue.commit();
      const failing = queue.write(100)!;
      failing.byte(0x12);
      queue.abandon();
      assert.deepEqual(queue.stats(), { queued: 0, sent: 0, dropped: 2, failedBatches: 0 });
      put(queue, logRecordBound('kept', {}), (w) => writeLogRecord(w, 1, SEVERITY.INFO, 'kept', {}));
    });
    assert.deepEqual(
      bodies.map((body) => logRecords(body).map((r) => r.body.stringValue)),
      [['kept']],
    );
  });
});
