/**
 * parseBulk's reading of a body, the pure part of `_bulk` (the HTTP behaviour is in
 * test/logs/ingest/ingest.test.ts and bulk.test.ts): repeated action lines (parsed once per body)
 * still give each item its own index and id, line numbers count the lines that are not blank, and a
 * document's core fields are taken by preference with the others kept as attributes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseBulk, parseBulkInTurns, type BulkParse } from '../../../src/logs/modules/elastic/bulk.js';
import { DECODE_CHUNK } from '../../../src/logs/modules/ingest/pipeline.js';

const NOW = Date.UTC(2026, 10, 29);
const ndjson = (...lines: unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');

describe('parseBulk', () => {
  test('repeated action lines: each item keeps its own index and id', () => {
    const lines: unknown[] = [];
    for (let i = 0; i < 100; i += 1)
      lines.push(i % 2 ? { create: { _index: 'a', _id: `id-${i % 4}` } } : { index: {} }, { message: `m${i}` });
    const { items, entries } = parseBulk(`${ndjson(...lines)}\n`, 'logs', NOW);
    assert.equal(items.length, 100);
    assert.equal(entries.length, 100);
    for (let i = 0; i < 100; i += 1) {
      const item = items[i]!;
      assert.equal(item.action, i % 2 ? 'create' : 'index');
      assert.equal(item.index, i % 2 ? 'a' : 'logs');
      if (i % 2) assert.equal(item.id, `id-${i % 4}`);
      assert.equal(entries[item.entry!]!.documentId, i % 2 ? `id-${i % 4}` : undefined);
      assert.equal(entries[item.entry!]!.attributes!._index, i % 2 ? 'a' : 'logs');
      assert.equal(entries[item.entry!]!.message, `m${i}`);
    }
    const generated = items.filter((_, i) => i % 2 === 0).map((item) => item.id);
    assert.equal(new Set(generated).size, 50, 'an action line without _id gets a new id every time');
  });

  test('blank lines and CRLF are skipped; a line that is no action names its number among the others', () => {
    const body = `\r\n{"index":{}}\r\n\r\n{"message":"one"}\r\n   \n"not an action"\n{"message":"skipped"}\n{"create":{}}\n{"message":"two"}`;
    const { items, entries } = parseBulk(body, 'logs', NOW);
    assert.deepEqual(
      entries.map((entry) => entry.message),
      ['one', 'two'],
    );
    assert.equal(items[1]!.error?.reason, 'line 3: expected an action (index or create)');
    const last = parseBulk('{"index":{}}', 'logs', NOW);
    assert.equal(last.items[0]!.error?.reason, 'the action has no document line');
  });

  test("the first core field present wins; the others stay attributes; the index is the action's", () => {
    const { items, entries } = parseBulk(
      ndjson(
        { index: { _index: 'app' } },
        {
          msg: 'second',
          message: 'first',
          log: { level: 'WARN' },
          level: 'error',
          _index: 'from-doc',
          host: { name: 'h1' },
          nested: { a: [1, 2] },
        },
      ),
      'logs',
      NOW,
    );
    const [entry] = entries;
    assert.equal(entry!.message, 'first');
    assert.equal(entry!.level, 'error');
    assert.equal(entry!.host, 'h1');
    assert.equal(entry!.timestamp, NOW);
    // A document sent without an `_id` is stored under the one the answer gives.
    assert.deepEqual(
      { ...entry!.attributes },
      { msg: 'second', 'log.level': 'WARN', _index: 'app', 'nested.a': '[1,2]', _id: items[0]!.id },
    );
  });

  test('in turns: the same items and entries, with a turn of the event loop every DECODE_CHUNK actions', async () => {
    const lines: unknown[] = [];
    for (let i = 0; i < 2 * DECODE_CHUNK + 200; i += 1) {
      if (i % 97 === 0) lines.push({ delete: { _id: `d${i}` } });
      else if (i % 89 === 0) lines.push({ index: {} }, '{"message": not json');
      else lines.push(i % 2 ? { create: { _index: 'a', _id: `id-${i}` } } : { index: {} }, { message: `m${i}`, level: 'WARN', n: i });
    }
    const body = `${ndjson(...lines)}\n`;
    // Generated ids differ from parse to parse: compared where they are not.
    const comparable = ({ items, entries }: BulkParse) => ({
      items: items.map((item) => ({ ...item, id: item.action === 'create' || item.action === 'delete' ? item.id : '' })),
      entries: entries.map((entry) => ({ ...entry, attributes: { ...entry.attributes, _id: entry.documentId ?? '' } })),
    });
    let turns = 0;
    const inTurns = await parseBulkInTurns(body, 'logs', NOW, async () => {
      turns += 1;
    });
    assert.deepEqual(comparable(inTurns), comparable(parseBulk(body, 'logs', NOW)));
    assert.equal(inTurns.items.length, 2 * DECODE_CHUNK + 200);
    assert.equal(turns, 2);

    // With the event loop's own turns, what was waiting (a reply of the SQLite thread, say) runs before the parse ends.
    let ranMeanwhile = false;
    setImmediate(() => (ranMeanwhile = true));
    const parsed = parseBulkInTurns(body, 'logs', NOW);
    assert.equal(ranMeanwhile, false);
    await parsed;
    assert.equal(ranMeanwhile, true);
  });
});
