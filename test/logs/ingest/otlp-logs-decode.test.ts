import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeLogsRequest, visitLogsRequest } from '../../../src/logs/modules/ingest/otlp-logs-decode.js';
import { root } from '../../../src/logs/modules/ingest/otlp-proto.js';
import { assignAttributes, attributesOf } from '../../../src/logs/modules/ingest/otlp-common.js';
import { dict } from '../../../src/shared/dict.js';
import { DECODE_CHUNK } from '../../../src/logs/modules/ingest/pipeline.js';
import { mapOtlpLogs, mapOtlpLogsProtobuf, LogsMapper } from '../../../src/logs/modules/ingest/otlp-logs.js';
import { seededRandom } from '../../helpers/seeded-random.js';

// The logs' own protobuf reader against protobufjs (decode, then toObject as the other signals read
// theirs): the same object for every body, and a failure for every body protobufjs refuses.

const Request = root.lookupType('otlp.ExportLogsServiceRequest');
const TO_OBJECT = { longs: String, defaults: false, oneofs: false } as const;
const protobufjsDecode = (body: Uint8Array): unknown => Request.toObject(Request.decode(body), TO_OBJECT);

function generator(seed: number) {
  const next = seededRandom(seed);
  const int = (max: number) => Math.floor(next() * max);
  const maybe = (p = 0.5) => next() < p;
  const text = () => ['', 'a', 'ünïcödé ✓', 'service.name', 'GET /api/v1/x', '__proto__', '1', 'x'.repeat(int(40))][int(8)]!;
  const long = () =>
    [
      '0',
      '1',
      '1700000000123456789',
      '18446744073709551615',
      '9007199254740993',
      String(int(2 ** 31)),
      '-1',
      '-9223372036854775808',
      '9223372036854775807',
    ][int(9)]!;
  const unsignedLong = () => ['0', '1', '1700000000123456789', '18446744073709551615', '9007199254740993', '4294967296'][int(6)]!;
  const bytes = () => Buffer.from(Array.from({ length: [0, 8, 16, 3][int(4)]! }, () => int(256)));
  const anyValue = (depth: number): Record<string, unknown> => {
    const value: Record<string, unknown> = {};
    const kinds = depth > 2 ? 5 : 7;
    // Now and then two members of the oneof at once, which the wire allows.
    for (let members = maybe(0.1) ? 2 : 1; members > 0; members -= 1) {
      switch (int(kinds)) {
        case 0:
          value.stringValue = text();
          break;
        case 1:
          value.boolValue = maybe();
          break;
        case 2:
          value.intValue = long();
          break;
        case 3:
          value.doubleValue = [0, 1.5, -2.25, 1e300, Number.NaN, Number.POSITIVE_INFINITY][int(6)];
          break;
        case 4:
          value.bytesValue = bytes();
          break;
        case 5:
          value.arrayValue = { values: Array.from({ length: int(3) }, () => anyValue(depth + 1)) };
          break;
        case 6:
          value.kvlistValue = { values: Array.from({ length: int(3) }, () => keyValue(depth + 1)) };
          break;
      }
    }
    return value;
  };
  const keyValue = (depth: number) => ({ key: text(), ...(maybe(0.9) ? { value: anyValue(depth) } : {}) });
  const attributes = () => Array.from({ length: int(4) }, () => keyValue(0));
  const record = () => ({
    ...(maybe(0.9) ? { timeUnixNano: unsignedLong() } : {}),
    ...(maybe() ? { observedTimeUnixNano: unsignedLong() } : {}),
    ...(maybe(0.8) ? { severityNumber: int(30) - 3 } : {}),
    ...(maybe() ? { severityText: text() } : {}),
    ...(maybe(0.9) ? { body: anyValue(0) } : {}),
    ...(maybe(0.7) ? { attributes: attributes() } : {}),
    ...(maybe(0.2) ? { droppedAttributesCount: int(5) } : {}),
    ...(maybe(0.2) ? { flags: int(2 ** 32) } : {}),
    ...(maybe() ? { traceId: bytes() } : {}),
    ...(maybe() ? { spanId: bytes() } : {}),
    ...(maybe(0.2) ? { eventName: text() } : {}),
  });
  const request = () => ({
    resourceLogs: Array.from({ length: int(3) }, () => ({
      ...(maybe(0.9) ? { resource: { attributes: attributes(), ...(maybe(0.2) ? { droppedAttributesCount: int(5) } : {}) } } : {}),
      ...(maybe(0.2) ? { schemaUrl: text() } : {}),
      scopeLogs: Array.from({ length: int(3) }, () => ({
        ...(maybe() ? { scope: { name: text(), version: text(), ...(maybe(0.3) ? { attributes: attributes() } : {}) } } : {}),
        ...(maybe(0.2) ? { schemaUrl: text() } : {}),
        logRecords: Array.from({ length: int(5) }, record),
      })),
    })),
  });
  return { request, int };
}

const encode = (request: Record<string, unknown>): Uint8Array => Request.encode(Request.fromObject(request)).finish();

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

/** The request visitLogsRequest visits, put together again as one object. */
async function visited(body: Uint8Array, turn: () => Promise<void> = async () => undefined): Promise<unknown> {
  const resourceLogs: Record<string, unknown>[] = [];
  let scopes: Record<string, unknown>[] = [];
  let records: Record<string, unknown>[] = [];
  await visitLogsRequest(
    body,
    {
      resourceLogs: (m) => {
        scopes = [];
        resourceLogs.push({ ...m, scopeLogs: scopes });
      },
      scopeLogs: (m) => {
        records = [];
        scopes.push({ ...m, logRecords: records });
      },
      logRecord: (m) => records.push(m),
    },
    turn,
  );
  // Empty lists are left out, as decoding leaves them out.
  for (const resource of resourceLogs) {
    for (const scope of resource.scopeLogs as Record<string, unknown>[])
      if ((scope.logRecords as unknown[]).length === 0) delete scope.logRecords;
    if ((resource.scopeLogs as unknown[]).length === 0) delete resource.scopeLogs;
  }
  return resourceLogs.length === 0 ? {} : { resourceLogs };
}

/** Either protobufjs, the reader and the visitor read the body into the same object, or all three refuse it. */
async function assertSameReading(body: Uint8Array, what: string): Promise<void> {
  let expected: unknown;
  let expectedError = false;
  try {
    expected = protobufjsDecode(body);
  } catch {
    expectedError = true;
  }
  if (expectedError) {
    assert.throws(() => decodeLogsRequest(body), Error, `${what}: protobufjs refuses it, so must the reader`);
    await assert.rejects(visited(body), Error, `${what}: protobufjs refuses it, so must the visitor`);
    return;
  }
  assert.deepEqual(decodeLogsRequest(body), expected, what);
  assert.deepEqual(await visited(body), expected, `${what} (visited)`);
}

describe('OTLP logs protobuf reader', () => {
  test('reads 500 generated requests as protobufjs does (64-bit values as decimal text, ids as bytes)', async () => {
    const { request } = generator(7);
    for (let index = 0; index < 500; index += 1) {
      const body = encode(request());
      await assertSameReading(Buffer.from(body), `request ${index}`);
    }
  });

  test('a record with every field: times past 2^53 exact, negative ints, the last of two oneof members', async () => {
    const body = encode({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] },
          scopeLogs: [
            {
              scope: { name: 'bench', version: '1' },
              logRecords: [
                {
                  timeUnixNano: '1700000000123456789',
                  observedTimeUnixNano: '18446744073709551615',
                  severityNumber: 17,
                  severityText: 'ERR',
                  body: { stringValue: 'hello', intValue: '-9223372036854775808' },
                  attributes: [{ key: 'n', value: { intValue: '9007199254740993' } }],
                  traceId: Buffer.alloc(16, 1),
                  spanId: Buffer.alloc(8, 2),
                  eventName: 'e',
                },
              ],
            },
          ],
        },
      ],
    });
    const decoded = decodeLogsRequest(Buffer.from(body)) as {
      resourceLogs: { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[];
    };
    const record = decoded.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    assert.equal(record.timeUnixNano, '1700000000123456789');
    assert.equal(record.observedTimeUnixNano, '18446744073709551615');
    assert.deepEqual(record.body, { intValue: '-9223372036854775808' });
    await assertSameReading(Buffer.from(body), 'the full record');
  });

  test("a record's attributes assigned without the intermediate dictionaries are those of attributesOf, in the same order", () => {
    const { request } = generator(23);
    let compared = 0;
    for (let index = 0; index < 300; index += 1) {
      const decoded = decodeLogsRequest(Buffer.from(encode(request()))) as {
        resourceLogs?: { scopeLogs?: { logRecords?: { attributes?: unknown }[] }[] }[];
      };
      for (const resourceLogs of decoded.resourceLogs ?? [])
        for (const scopeLogs of resourceLogs.scopeLogs ?? [])
          for (const record of scopeLogs.logRecords ?? []) {
            // Over attributes already there, as a resource's are.
            const base = () => Object.assign(dict<string | number | boolean>(), { 'service.name': 'api', a: 'resource', '1': 'one' });
            const direct = base();
            assignAttributes(direct, record.attributes);
            assert.deepEqual(Object.entries(direct), Object.entries(Object.assign(base(), attributesOf(record.attributes))));
            compared += 1;
          }
    }
    assert.ok(compared > 500);
  });

  test('truncated, corrupted and foreign bodies: refused when protobufjs refuses them, else read alike', async () => {
    const { request, int } = generator(11);
    for (let index = 0; index < 1000; index += 1) {
      const body = Buffer.from(encode(request()));
      if (body.length === 0) continue;
      await assertSameReading(body.subarray(0, int(body.length)), `truncated ${index}`);
      const corrupted = Buffer.from(body);
      for (let flips = 1 + int(3); flips > 0; flips -= 1) corrupted[int(corrupted.length)] = int(256);
      await assertSameReading(corrupted, `corrupted ${index}`);
    }
    await assertSameReading(Buffer.from('{"resourceLogs":[]}'), 'JSON sent as protobuf');
    const Records = root.lookupType('otlp.ScopeLogs');
    const record = (fields: Record<string, unknown>) =>
      Buffer.from(encode({ resourceLogs: [{ scopeLogs: [Records.toObject(Records.fromObject({ logRecords: [fields] }))] }] }));
    // Two records' bytes as one record: every field seen twice (the later default removes, messages merge).
    const twice = (first: Record<string, unknown>, second: Record<string, unknown>) => {
      const LogRecord = root.lookupType('otlp.LogRecord');
      const bytes = Buffer.concat([
        LogRecord.encode(LogRecord.fromObject(first)).finish(),
        LogRecord.encode(LogRecord.fromObject(second)).finish(),
      ]);
      const scope = Buffer.concat([Buffer.from([0x12]), varint(bytes.length), bytes]);
      const resource = Buffer.concat([Buffer.from([0x12]), varint(scope.length), scope]);
      return Buffer.concat([Buffer.from([0x0a]), varint(resource.length), resource]);
    };
    await assertSameReading(record({ severityNumber: 9, body: { stringValue: 'x' } }), 'one record');
    await assertSameReading(
      twice(
        { severityNumber: 9, severityText: 'INFO', body: { kvlistValue: { values: [{ key: 'a', value: { intValue: '1' } }] } } },
        { body: { kvlistValue: { values: [{ key: 'b', value: { boolValue: false } }] } }, attributes: [{ key: 'k' }] },
      ),
      'a record whose fields come twice',
    );
    // Nested arrays past protobufjs's recursion limit (100).
    // (written by hand: protobufjs's encoder stops at the limit too).
    const delimited = (tag: number, bytes: Buffer) => Buffer.concat([Buffer.from([tag]), varint(bytes.length), bytes]);
    // A resource after its scope logs, and twice (merged), and a scope after its records.
    const Resource = root.lookupType('otlp.Resource');
    const resourceBytes = (key: string) =>
      delimited(0x0a, Buffer.from(Resource.encode(Resource.fromObject({ attributes: [{ key, value: { stringValue: key } }] })).finish()));
    const scopeLogsBytes = Buffer.concat([
      delimited(0x12, Buffer.from(root.lookupType('otlp.LogRecord').encode({ severityNumber: 9 }).finish())),
      delimited(0x0a, Buffer.from('\x0a\x01s', 'latin1')),
    ]);
    await assertSameReading(
      delimited(0x0a, Buffer.concat([delimited(0x12, scopeLogsBytes), resourceBytes('service.name'), resourceBytes('host.name')])),
      'a resource after its scope logs, twice',
    );
    // An int64 whose varint runs past the end of its value, with more of the record after it.
    const record6 = Buffer.concat([delimited(0x2a, Buffer.from([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])), Buffer.from([0x10, 0x09])]);
    await assertSameReading(delimited(0x0a, delimited(0x12, delimited(0x12, record6))), 'a varint past its message');
    for (const levels of [40, 120]) {
      let anyValue = delimited(0x0a, Buffer.from('bottom'));
      for (let level = 0; level < levels; level += 1) anyValue = delimited(0x2a, delimited(0x0a, anyValue));
      const body = delimited(0x0a, delimited(0x12, delimited(0x12, delimited(0x2a, anyValue))));
      await assertSameReading(body, `${levels} arrays nested`);
    }
    await assertSameReading(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), 'a length past the end');
    await assertSameReading(Buffer.from([0x0b, 0x0c]), 'a group');
    await assertSameReading(Buffer.from([0x0e]), 'wire type 6');
  });

  test('a turn of the event loop every DECODE_CHUNK records, across scopes and resources, and the same reading', async () => {
    const records = (count: number, from: number) =>
      Array.from({ length: count }, (_, i) => ({ severityNumber: 9, body: { stringValue: `r${from + i}` } }));
    const request = {
      resourceLogs: [
        { scopeLogs: [{ logRecords: records(DECODE_CHUNK - 1, 0) }, { logRecords: records(2, DECODE_CHUNK - 1) }] },
        { scopeLogs: [{ logRecords: records(DECODE_CHUNK + 10, DECODE_CHUNK + 1) }] },
      ],
    };
    const body = Buffer.from(encode(request));
    let turns = 0;
    const seen = (await visited(body, async () => {
      turns += 1;
    })) as { resourceLogs: { scopeLogs: { logRecords: { body: unknown }[] }[] }[] };
    assert.equal(turns, 2, `${2 * DECODE_CHUNK + 11} records: a turn before the ${DECODE_CHUNK}th and the ${2 * DECODE_CHUNK}th`);
    assert.deepEqual(seen, protobufjsDecode(body));
  });

  // mapOtlpLogsProtobuf reads plain records straight off the wire (PlainRecord) and the rest as
  // Messages: every body must map as the general mapping of the decoded request maps it.
  const NOW = 1_750_000_000_000;

  /** How many records a body's mapping read as plain records, and how many as Messages. */
  async function readPaths(body: Uint8Array): Promise<{ plain: number; messages: number }> {
    const paths = { plain: 0, messages: 0 };
    const mapper = new LogsMapper(NOW);
    await visitLogsRequest(body, {
      resourceLogs: (m) => mapper.resourceLogs(m),
      scopeLogs: (m) => mapper.scopeLogs(m),
      logRecord: () => (paths.messages += 1),
      plainRecord: () => (paths.plain += 1),
    });
    return paths;
  }

  async function assertSameMapping(body: Uint8Array, what: string): Promise<void> {
    let expected: unknown;
    try {
      expected = mapOtlpLogs(decodeLogsRequest(body), NOW);
    } catch {
      await assert.rejects(mapOtlpLogsProtobuf(body, NOW), Error, `${what}: decoding refuses it, so must the mapping`);
      return;
    }
    assert.deepEqual(await mapOtlpLogsProtobuf(body, NOW), expected, what);
  }

  /** Records as SDKs and the Collector send them: plain, but now and then a shape that is not. */
  function sdkRequests(seed: number) {
    const next = seededRandom(seed);
    const int = (max: number) => Math.floor(next() * max);
    const maybe = (p = 0.5) => next() < p;
    const text = () => ['', 'GET /api/v1/orders', 'ünïcödé ✓', 'a'.repeat(70), 'é'.repeat(40), '__proto__', 'service.name', '7'][int(8)]!;
    const scalar = (): Record<string, unknown> =>
      [
        { stringValue: text() },
        { intValue: ['200', '-1', '9007199254740993', '-9223372036854775808', '0'][int(5)] },
        { doubleValue: [12.5, 0, Number.NaN, Number.NEGATIVE_INFINITY][int(4)] },
        { boolValue: maybe() },
        { bytesValue: Buffer.from([1, 2, int(256)]) },
        {},
        // Not plain: the record is read as a Message.
        { arrayValue: { values: [{ stringValue: 'x' }] } },
      ][maybe(0.95) ? int(6) : 6]!;
    const key = () =>
      maybe(0.97)
        ? [
            'http.route',
            'http.status_code',
            'duration_ms',
            'k8s.pod.name',
            'service.name',
            '1',
            'constructor',
            '__proto__',
            `a${int(200)}`,
          ][int(9)]!
        : '';
    const attributes = () => {
      // Now and then more than PLAIN_ATTRIBUTES of them, each key once, past flatten.ts's MAX_KEYS (512) too: not plain.
      if (maybe(0.02))
        return Array.from({ length: 600 }, (_, index) => ({ key: index === 50 ? '1' : `k${index}`, value: { intValue: String(index) } }));
      const list: Record<string, unknown>[] = [];
      for (let count = int(6); count > 0; count -= 1) list.push({ key: key(), ...(maybe(0.95) ? { value: scalar() } : {}) });
      // Each key once is the plain shape; now and then one comes twice.
      return maybe(0.9) ? list.filter((kv, index) => list.findIndex((other) => other.key === kv.key) === index) : list;
    };
    const id = (bytes: number) => (maybe(0.1) ? Buffer.alloc(bytes) : Buffer.from(Array.from({ length: bytes }, () => int(256))));
    const record = () => ({
      // Now and then the last nanosecond of a millisecond, which a double of the nanoseconds rounds into the next.
      ...(maybe(0.95) ? { timeUnixNano: String(BigInt(NOW + int(1e9)) * 1_000_000n + BigInt(maybe(0.3) ? 999_999 : int(1e6))) } : {}),
      ...(maybe(0.3) ? { observedTimeUnixNano: ['1', '999999', '1000000', '1750000000000123456'][int(4)] } : {}),
      ...(maybe(0.9) ? { severityNumber: int(26) - 1 } : {}),
      ...(maybe(0.7) ? { severityText: ['INFO', 'ERR', 'warn', ' Fatal ', '', 'notice'][int(6)] } : {}),
      ...(maybe(0.95) ? { body: scalar() } : {}),
      ...(maybe(0.9) ? { attributes: attributes() } : {}),
      ...(maybe(0.1) ? { droppedAttributesCount: int(3) } : {}),
      ...(maybe(0.1) ? { flags: 1 } : {}),
      ...(maybe(0.6) ? { traceId: id(16), spanId: id(8) } : {}),
      ...(maybe(0.1) ? { eventName: text() } : {}),
    });
    return () => ({
      resourceLogs: Array.from({ length: 1 + int(2) }, () => ({
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'api' } },
            { key: 'host.name', value: { stringValue: 'node-1' } },
            { key: 'http.route', value: { stringValue: 'from the resource' } },
          ],
        },
        scopeLogs: [{ scope: { name: 'sdk', version: '1.0' }, logRecords: Array.from({ length: int(8) }, record) }],
      })),
    });
  }

  test('plain records mapped straight off the wire as the decoded request maps them; the others as Messages', async () => {
    const request = sdkRequests(5);
    const paths = { plain: 0, messages: 0 };
    for (let index = 0; index < 400; index += 1) {
      const body = Buffer.from(encode(request()));
      await assertSameMapping(body, `request ${index}`);
      const read = await readPaths(body);
      paths.plain += read.plain;
      paths.messages += read.messages;
    }
    // Both readings were compared: most records plain, some not.
    assert.ok(paths.plain > 1000 && paths.messages > 50, JSON.stringify(paths));
    // And the generator of odd shapes, truncated and corrupted too: read alike, or refused alike.
    const { request: odd, int } = generator(31);
    for (let index = 0; index < 500; index += 1) {
      const body = Buffer.from(encode(odd()));
      await assertSameMapping(body, `odd request ${index}`);
      await assertSameMapping(body.subarray(0, int(body.length + 1)), `truncated ${index}`);
      const corrupted = Buffer.from(body);
      if (corrupted.length > 0) corrupted[int(corrupted.length)] = int(256);
      await assertSameMapping(corrupted, `corrupted ${index}`);
    }
    // A body twice, the second without a value: merged, the first value stays.
    const LogRecord = root.lookupType('otlp.LogRecord');
    const recordBytes = Buffer.concat([
      LogRecord.encode(LogRecord.fromObject({ severityNumber: 9, body: { stringValue: 'first' } })).finish(),
      Buffer.from([0x2a, 0x00]),
    ]);
    const scope = Buffer.concat([Buffer.from([0x12]), varint(recordBytes.length), recordBytes]);
    const resource = Buffer.concat([Buffer.from([0x12]), varint(scope.length), scope]);
    const twoBodies = Buffer.concat([Buffer.from([0x0a]), varint(resource.length), resource]);
    assert.equal((await mapOtlpLogsProtobuf(twoBodies, NOW)).items[0]!.message, 'first');
    await assertSameMapping(twoBodies, 'a body twice');
    // A Uint8Array that is no Buffer is read alike.
    const body = encode(request());
    await assertSameMapping(new Uint8Array(body), 'a Uint8Array');
  });
});
