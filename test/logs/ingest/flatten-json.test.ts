import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { flattenJsonText } from '../../../src/logs/modules/ingest/flatten-json.js';
import { flattenDocument } from '../../../src/logs/modules/ingest/flatten.js';
import { isPlainObject } from '../../../src/shared/text/storable-text.js';
import { seededRandom } from '../../helpers/seeded-random.js';

// flattenJsonText reads the shape shippers send straight from the text; whatever it reads must be
// what JSON.parse then flattenDocument make of it, and it must leave every other text to them.

/** Reserved names (slot by name), as `_bulk` reserves its core fields. */
const RESERVED = new Map(['@timestamp', 'message', 'log.level', 'level', 'service.name', 'a.b'].map((name, slot) => [name, slot]));

type Reading = { fields: [string, unknown][]; reserved: unknown[] } | 'not JSON' | 'not an object' | 'too deep';

/** What the general way makes of a text. */
function generalReading(text: string): Reading {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (!isPlainObject(doc)) return 'not an object';
  const reserved = new Array<unknown>(RESERVED.size).fill(undefined);
  const flat = flattenDocument(doc, RESERVED, reserved as never[]);
  return flat ? { fields: Object.entries(flat.fields), reserved } : 'too deep';
}

/** flattenJsonText's reading, or undefined when it leaves the text to the general way (its reserved slots left undefined). */
function textReading(text: string): Reading | undefined {
  const reserved = new Array<unknown>(RESERVED.size).fill(undefined);
  const flat = flattenJsonText(text, RESERVED, reserved as never[]);
  if (flat === undefined) {
    assert.ok(
      reserved.every((value) => value === undefined),
      'left to the general way, the reserved values are as given',
    );
    return undefined;
  }
  assert.equal(flat.reserved, reserved);
  return { fields: Object.entries(flat.fields), reserved };
}

/** JSON-ish texts written directly (duplicate keys, odd numbers and spaces are possible), mostly of the shippers' shape. */
function texts(seed: number, odd: number) {
  const next = seededRandom(seed);
  const int = (max: number) => Math.floor(next() * max);
  const maybe = (p: number) => next() < p;
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const KEYS = ['message', '@timestamp', 'log', 'level', 'service', 'name', 'a', 'b', 'a.b', 'http', 'status_code', 'tags'];
  const ODD_KEYS = ['', '__proto__', 'constructor', '0', '12', '007', 'é', 'a\\"b', 'a\\u002eb', 'x\\\\', 'toString', '1e3'];
  const STRINGS = [
    '',
    'GET /x',
    'ünïcödé ✓',
    'a \\"quoted\\" word',
    '\\n',
    '\\u0000',
    '\\ud800',
    'tab\\there',
    '{\\"not\\":\\"an object\\"}',
    'x'.repeat(300),
  ];
  const ODD_STRINGS = ['raw\ttab', 'raw\u0001', '\\x', '\\u12', 'bad \\q escape'];
  const NUMBERS = ['0', '-0', '200', '-17', '1.5', '1e3', '1E-7', '-2.5e+10', '1e400', '123456789012345678901234567890', '0.1'];
  const ODD_NUMBERS = ['01', '1.', '.5', '-', '+1', '1e', '0x10', 'NaN', 'Infinity', '- 1', '1.e5'];
  const space = () => (maybe(odd) ? pick([' ', '  ', '\t', '\r\n', '\n']) : maybe(0.1) ? ' ' : '');
  const key = () => (maybe(odd) ? pick(ODD_KEYS) : pick(KEYS));
  const value = (depth: number): string => {
    const kind = int(maybe(odd) ? 9 : 7);
    switch (kind) {
      case 0:
      case 1:
        return `"${maybe(odd) ? pick(ODD_STRINGS) : pick(STRINGS)}"`;
      case 2:
        return maybe(odd) ? pick(ODD_NUMBERS) : pick(NUMBERS);
      case 3:
        return pick(['true', 'false', 'null']);
      case 4:
      case 5:
        // Deeper than flattening goes (MAX_DEPTH) only in odd documents.
        return depth < (odd === 0 ? 6 : 11) ? object(depth + 1) : '{}';
      case 6:
        return `[${space()}${Array.from({ length: int(3) }, () => value(depth + 1)).join(',')}]`;
      case 7:
        return pick(['tru', 'nul', 'undefined', "'single'", '']);
      default:
        return depth < 11 ? object(depth + 1) : '1';
    }
  };
  const object = (depth: number): string => {
    // Each key once, but now and then.
    const keys = [...new Set(Array.from({ length: int(depth === 0 ? 8 : 4) }, key))];
    const members = keys.map((name) => `${space()}"${name}"${space()}:${space()}${value(depth)}`);
    // Now and then a key twice.
    if (members.length > 1 && maybe(odd)) members.push(members[int(members.length)]!);
    return `{${members.join(',')}${space()}}`;
  };
  return () => {
    let text = `${space()}${object(0)}${space()}`;
    if (maybe(odd / 2)) text = text.slice(0, int(text.length));
    if (maybe(odd / 2)) text += pick(['x', '}', ',', '{}']);
    if (maybe(odd / 4)) text = pick(['[]', '"text"', '12', 'null', '']);
    return text;
  };
}

function assertSameReading(text: string): 'read' | 'left' {
  const expected = generalReading(text);
  const read = textReading(text);
  if (read === undefined) return 'left';
  assert.deepEqual(read, expected, text);
  return 'read';
}

describe('flattenJsonText', () => {
  test("reads the shippers' shape as JSON.parse then flattenDocument do, and leaves the rest to them", () => {
    for (const [seed, odd] of [
      [1, 0],
      [2, 0.02],
      [3, 0.1],
      [4, 0.3],
    ] as const) {
      const next = texts(seed, odd);
      const counts = { read: 0, left: 0 };
      for (let index = 0; index < 3000; index += 1) counts[assertSameReading(next())] += 1;
      // Both ways taken: the plain texts read here, the odd ones left.
      if (odd === 0) assert.equal(counts.left, 0, JSON.stringify(counts));
      else assert.ok(counts.read > 100 && counts.left > 100, `${odd}: ${JSON.stringify(counts)}`);
    }
  });

  test('keys remembered from earlier documents: found in any order, a duplicate still found, numeric keys never', () => {
    const cases = [
      '{"message":"a","level":"info","service":{"name":"api"}}',
      '{"level":"warn","message":"b","service":{"name":"db"}}',
      '{"service":{"name":"x"},"message":"c"}',
      // The same key twice, the later value wins in its first place (JSON.parse): left to it.
      '{"message":"d","level":"info","message":"e"}',
      '{"service":{"name":"x"},"level":"error","service":{"version":"2"}}',
      '{"b":1,"a":{"b":2},"a.b":3}',
      '{"z":1,"10":2,"2":3}',
      '{"message":"f"}',
    ];
    for (let round = 0; round < 3; round += 1) for (const text of cases) assertSameReading(text);
    assert.equal(textReading('{"message":"d","level":"info","message":"e"}'), undefined);
    // Names a client chose are data: read here, as fields of their own.
    const hostile = '{"__proto__":{"__proto__":"x","constructor":1},"constructor":"c","toString":{"prototype":true}}';
    assertSameReading(hostile);
    assert.deepEqual(textReading(hostile), {
      fields: [
        ['__proto__.__proto__', 'x'],
        ['__proto__.constructor', 1],
        ['constructor', 'c'],
        ['toString.prototype', true],
      ],
      reserved: new Array(RESERVED.size).fill(undefined),
    });
    assert.equal(textReading('{"z":1,"10":2}'), undefined);
    assert.deepEqual(textReading('{"service":{"name":"x"},"message":"c"}'), generalReading('{"service":{"name":"x"},"message":"c"}'));
  });

  test('a client sending ever new keys: the remembered keys are bounded and forgotten, and reading stays right', () => {
    for (let index = 0; index < 10_000; index += 1) {
      const text = `{"message":"m","k${index}":${index},"nested":{"n${index % 97}":true,"same":"s"}}`;
      assertSameReading(text);
    }
    // A key longer than any remembered: read the general way, and not kept.
    const long = `{"message":"m","${'k'.repeat(10_000)}":1}`;
    assertSameReading(long);
    assert.equal(textReading(long), undefined);
    // After all of them, the documents of before are still read alike.
    assertSameReading('{"message":"after","level":"info","service":{"name":"api"}}');
  });

  test('deep documents: objects below the flattening depth kept as text, past the document depth left to the general way', () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    for (const levels of [1, 7, 8, 9, 20, 150]) {
      assertSameReading(nested(levels));
    }
    // Below MAX_DEPTH an object is kept as its JSON text, as arrays are.
    assert.notEqual(textReading(nested(7)), undefined);
    assert.notEqual(textReading(nested(20)), undefined);
    assert.deepEqual(textReading('{"a":{"b":[1,{"c":"]}[{\\""}],"d":2}}'), generalReading('{"a":{"b":[1,{"c":"]}[{\\""}],"d":2}}'));
    assert.equal(textReading(nested(150)), undefined);
    assert.equal(generalReading(nested(150)), 'too deep');
    // More fields than a document keeps (MAX_KEYS, 512), over objects of fewer keys each.
    const wide = `{${Array.from({ length: 12 }, (_, object) => `"o${object}":{${Array.from({ length: 50 }, (_, key) => `"k${key}":${key}`).join(',')}}`).join(',')}}`;
    assertSameReading(wide);
    assert.equal(textReading(wide), undefined);
  });
});
