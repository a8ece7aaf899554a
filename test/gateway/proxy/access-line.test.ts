import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { accessLine, type AccessFields } from '../../../src/gateway/modules/proxy/access-line.js';

/** A stream that keeps what is written to it, line by line. */
function collector(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

/** The line pino itself writes for the same fields: the shape log shippers and tests already read. */
async function pinoLine(fields: AccessFields): Promise<Record<string, unknown>> {
  const { stream, lines } = collector();
  pino({ level: 'info' }, stream).info({ ...fields }, 'proxied');
  await new Promise((resolve) => setImmediate(resolve));
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

const withoutTime = (line: Record<string, unknown>) => {
  const { time, ...rest } = line;
  assert.equal(typeof time, 'number');
  return rest;
};

describe('proxy access line', () => {
  const cases: AccessFields[] = [
    {
      reqId: 'a1',
      service: 'master-data',
      method: 'GET',
      path: '/api/v1/master-data/provinsi',
      query: 'tahun,nik',
      status: 200,
      upstreamMs: 1.2,
      totalMs: 3.4,
      failure: undefined,
    },
    {
      reqId: 'b2',
      service: 'file',
      method: 'POST',
      // Characters JSON must escape, a lone surrogate and non-ASCII text: still one valid JSON line.
      path: '/api/v1/file/"quoted"\\back\u0001\ud800/é✓',
      query: undefined,
      status: 499,
      upstreamMs: undefined,
      totalMs: 12,
      failure: 'client went away',
    },
  ];

  for (const fields of cases) {
    test(`the same fields, values and order as pino's line (${fields.reqId})`, async () => {
      const { stream, lines } = collector();
      accessLine('info', stream)!(fields);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(lines.length, 1);
      const ours = JSON.parse(lines[0]!) as Record<string, unknown>;
      const theirs = await pinoLine(fields);
      assert.deepEqual(Object.keys(ours), Object.keys(theirs));
      assert.deepEqual(withoutTime(ours), withoutTime(theirs));
    });
  }

  test('not written when the level leaves info lines out', () => {
    assert.equal(accessLine('warn'), undefined);
    assert.equal(accessLine('silent'), undefined);
    assert.notEqual(accessLine('debug', collector().stream), undefined);
  });
});
