import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERRORS } from '../../src/shared/errors/catalogue.js';
import { DIALECTS } from '../helpers/databases.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD, uniqueName } from '../helpers/logs.js';
import { startLogsUnderFault, type LogsUnderFault } from '../helpers/logs-fault-fixture.js';
import { lastJsonBody, rawExchange, requestHead, type RawExchange } from '../helpers/raw-http.js';

/**
 * Fault suite, logs service: garbage and HTTP abuse on a real socket. Each request gets its 4xx with
 * a body in the documented shape (`{"error": message}`), or a closed connection; never a 5xx, never a crash; nothing
 * is stored; the process keeps serving and its descriptors and memory come back down.
 */

/** LOGS_REQUEST_TIMEOUT for this process: a slow client is cut off after it (408, then close). */
const REQUEST_TIMEOUT = '2s';

/** A 4xx whose body has a string `error` (the documented shape), or the server closing without an answer. */
function assertRefused(exchange: RawExchange, status: number | readonly number[], what: string) {
  const statuses = Array.isArray(status) ? status : [status];
  if (exchange.statuses.length === 0) {
    assert.ok(exchange.closedByServer, `${what}: neither an answer nor a close`);
    return;
  }
  assert.ok(
    statuses.includes(exchange.statuses[0]!),
    `${what}: got ${exchange.statuses[0]}, want ${statuses.join(' or ')}\n${exchange.text.slice(0, 600)}`,
  );
  const body = lastJsonBody(exchange.text) as Record<string, unknown>;
  if (typeof body.error === 'object') {
    // The Elasticsearch-compatible API answers in Elasticsearch's shape (docs/elasticsearch.md).
    const error = body.error as { type?: unknown; reason?: unknown };
    assert.ok(typeof error.type === 'string' && typeof error.reason === 'string', `${what}: body ${JSON.stringify(body)}`);
    assert.equal(body.status, exchange.statuses[0], `${what}: status in the body`);
    return;
  }
  assert.ok(LOGS_MESSAGES.has(body.error as string), `${what}: body ${JSON.stringify(body)}`);
  assert.deepEqual(
    Object.keys(body).filter((key) => !['error', 'detail', 'position'].includes(key)),
    [],
    `${what}: not the documented shape ${JSON.stringify(body)}`,
  );
}

/** The logs service's documented error messages (spec 7.2 shape: `{"error": message}`). */
const LOGS_MESSAGES: ReadonlySet<string> = new Set(
  Object.entries(ERRORS)
    .filter(([code]) => code.startsWith('LOGS_'))
    .map(([, entry]) => entry.en),
);

const json = (value: unknown) => JSON.stringify(value);

for (const dialect of DIALECTS) {
  describe(`logs faults: garbage and HTTP abuse [${dialect}]`, () => {
    let logs: LogsUnderFault;
    before(async () => {
      logs = await startLogsUnderFault(dialect, { LOGS_REQUEST_TIMEOUT: REQUEST_TIMEOUT });
    });
    after(async () => logs?.close());

    /** One request with a body, framed by Content-Length. */
    const withBody = (method: string, path: string, headers: Record<string, string>, body: string | Buffer) =>
      rawExchange(logs.port, [requestHead(method, path, { ...headers, 'content-length': Buffer.byteLength(body) }), body]);

    test('malformed JSON, wrong content types, protobuf that is not protobuf, NUL bytes: 400/415 in the documented shape, nothing stored', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('garbage').toLowerCase();
      const auth = { authorization: logs.admin };
      // Text a route does not take is refused by its parser (415) or read as text and refused by its schema (400).
      const cases: [string, Promise<RawExchange>, number | number[]][] = [
        [
          'login, malformed JSON',
          withBody('POST', '/api/login', { 'content-type': 'application/json' }, '{"username":"admin","password":'),
          400,
        ],
        [
          'search, malformed JSON',
          withBody('POST', '/api/v1/logs/list/paginate', { ...auth, 'content-type': 'application/json' }, '{"query": "a" "b"}'),
          400,
        ],
        [
          '/v1/logs, malformed JSON',
          withBody('POST', '/v1/logs', { ...auth, 'content-type': 'application/json' }, `{"resourceLogs": [${marker}`),
          400,
        ],
        [
          'login, text/plain (read as text, then refused by the schema)',
          withBody('POST', '/api/login', { 'content-type': 'text/plain' }, json({ username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD })),
          400,
        ],
        [
          'search, application/xml',
          withBody('POST', '/api/v1/logs/list/paginate', { ...auth, 'content-type': 'application/xml' }, `<q>${marker}</q>`),
          [400, 415],
        ],
        ['/v1/logs, text/csv', withBody('POST', '/v1/logs', { ...auth, 'content-type': 'text/csv' }, `a,b\n${marker},1\n`), [400, 415]],
        ['/v1/traces, text/plain', withBody('POST', '/v1/traces', { ...auth, 'content-type': 'text/plain' }, marker), [400, 415]],
        [
          '_bulk, Content-Encoding br',
          withBody(
            'POST',
            '/api/v1/_elastic/_bulk',
            { ...auth, 'content-type': 'application/x-ndjson', 'content-encoding': 'br' },
            `{"index":{}}\n{"message":"${marker}"}\n`,
          ),
          415,
        ],
        [
          '_bulk, gzip header on a plain body',
          withBody(
            'POST',
            '/api/v1/_elastic/_bulk',
            { ...auth, 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
            `{"index":{}}\n{"message":"${marker}"}\n`,
          ),
          400,
        ],
        [
          'login, NUL in a JSON string',
          withBody(
            'POST',
            '/api/login',
            { 'content-type': 'application/json' },
            json({ username: 'adm\u0000in', password: LOGS_ADMIN_PASSWORD }),
          ),
          400,
        ],
        [
          'search, NUL in the query',
          withBody(
            'POST',
            '/api/v1/logs/list/paginate',
            { ...auth, 'content-type': 'application/json' },
            json({ query: `${marker}\u0000` }),
          ),
          400,
        ],
        [
          'login, raw NUL bytes in the body',
          withBody('POST', '/api/login', { 'content-type': 'application/json' }, Buffer.from([0x7b, 0x00, 0x00, 0x7d])),
          400,
        ],
      ];
      for (const path of ['/v1/logs', '/v1/traces', '/v1/metrics']) {
        cases.push([
          `${path}, protobuf that is not protobuf`,
          withBody(
            'POST',
            path,
            { ...auth, 'content-type': 'application/x-protobuf' },
            Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x00, 0x9c]),
          ),
          400,
        ]);
        cases.push([
          `${path}, protobuf content type with a JSON body`,
          withBody('POST', path, { ...auth, 'content-type': 'application/x-protobuf' }, json({ marker })),
          400,
        ]);
      }
      for (const [what, exchange, status] of cases) assertRefused(await exchange, status, what);
      // Lines that are not JSON fail alone, as Elasticsearch does: 200, `errors: true`, an error per item.
      const notNdjson = await logs.call('POST', '/api/v1/_elastic/_bulk', {
        headers: { ...auth, 'content-type': 'application/x-ndjson' },
        body: `${marker} is not json\n{"index":{}}\n{"message": ${marker}}\n`,
      });
      assert.equal(notNdjson.status, 200);
      const bulk = JSON.parse(notNdjson.body.toString()) as { errors: boolean; items: Record<string, { error?: unknown }>[] };
      assert.equal(bulk.errors, true);
      assert.ok(bulk.items.length > 0 && bulk.items.every((item) => Object.values(item)[0]!.error !== undefined));
      assert.equal(await logs.count(marker), 0);
      await logs.stillServes(baseline);
    });

    test('framing abuse (Content-Length with Transfer-Encoding, two Content-Lengths, obs-fold, NUL in a header, a huge header, too many headers): 400/431 or a closed connection', async () => {
      const baseline = logs.baseline();
      const marker = uniqueName('smuggled').toLowerCase();
      const bulk = `{"index":{}}\n{"message":"${marker}"}\n`;
      const start = `POST /api/v1/_elastic/_bulk HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${logs.admin}\r\nContent-Type: application/x-ndjson\r\n`;
      const chunked = `${Buffer.byteLength(bulk).toString(16)}\r\n${bulk}\r\n0\r\n\r\n`;
      const cases: [string, string, number[]][] = [
        [
          'Content-Length and Transfer-Encoding',
          `${start}Content-Length: ${Buffer.byteLength(bulk)}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`,
          [400],
        ],
        ['two different Content-Lengths', `${start}Content-Length: ${Buffer.byteLength(bulk)}\r\nContent-Length: 5\r\n\r\n${bulk}`, [400]],
        [
          'two equal Content-Lengths',
          `${start}Content-Length: ${Buffer.byteLength(bulk)}\r\nContent-Length: ${Buffer.byteLength(bulk)}\r\n\r\n${bulk}`,
          [400],
        ],
        ['Transfer-Encoding obfuscated', `${start}Transfer-Encoding : chunked\r\n\r\n${chunked}`, [400]],
        ['obs-fold', `${start}X-Folded: first\r\n second\r\nContent-Length: ${Buffer.byteLength(bulk)}\r\n\r\n${bulk}`, [400]],
        ['NUL in a header value', `${start}X-Nul: a\u0000b\r\nContent-Length: ${Buffer.byteLength(bulk)}\r\n\r\n${bulk}`, [400]],
        ['a 64 KiB header', `${start}X-Huge: ${'a'.repeat(65_536)}\r\nContent-Length: ${Buffer.byteLength(bulk)}\r\n\r\n${bulk}`, [431]],
        [
          '3000 headers',
          `${start}${Array.from({ length: 3000 }, (_, i) => `X-Many-${i}: ${i}\r\n`).join('')}Content-Length: ${Buffer.byteLength(bulk)}\r\n\r\n${bulk}`,
          [400, 431],
        ],
        ['a request line that is not HTTP', `GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n`, [400, 505]],
        ['a bare LF request', `GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n`, [200, 400]],
      ];
      for (const [what, bytes, statuses] of cases) {
        const exchange = await rawExchange(logs.port, [Buffer.from(bytes, 'latin1')]);
        if (exchange.statuses[0] === 200) {
          assert.equal(what, 'a bare LF request', `${what} was accepted`);
          continue;
        }
        assertRefused(exchange, statuses, what);
      }
      assert.equal(await logs.count(marker), 0, 'no framing smuggled a batch in');
      await logs.stillServes(baseline);
    });

    test('pipelining: requests sent in one write are answered in order; after a refused body the connection closes, what follows is not answered', async () => {
      const baseline = logs.baseline();
      const bulkRequest = (marker: string) => {
        const bulk = `{"index":{}}\n{"message":"${marker}"}\n`;
        return (
          requestHead('POST', '/api/v1/_elastic/_bulk', {
            authorization: logs.admin,
            'content-type': 'application/x-ndjson',
            'content-length': Buffer.byteLength(bulk),
          }) + bulk
        );
      };
      const served = uniqueName('pipelined').toLowerCase();
      const good = await rawExchange(
        logs.port,
        [[requestHead('GET', '/healthz'), bulkRequest(served), requestHead('GET', '/healthz')].join('')],
        { expectResponses: 3 },
      );
      assert.deepEqual(good.statuses, [200, 200, 200], good.text.slice(0, 2000));
      assert.equal(await logs.count(served), 1);

      const dropped = uniqueName('afterbad').toLowerCase();
      const garbage = '{"username":';
      const bad = await rawExchange(
        logs.port,
        [
          [
            requestHead('GET', '/healthz'),
            requestHead('POST', '/api/login', { 'content-type': 'application/json', 'content-length': garbage.length }) + garbage,
            bulkRequest(dropped),
          ].join(''),
        ],
        { expectResponses: 3 },
      );
      assert.deepEqual(bad.statuses, [200, 400], bad.text.slice(0, 2000));
      assert.ok(bad.closedByServer);
      assert.deepEqual(lastJsonBody(bad.text), { error: 'invalid json body' });
      // Node may already have handed the pipelined request on before the close: it is run at most once,
      // its answer is never sent, and a shipper retries it (at least once, as after any lost answer).
      assert.ok((await logs.count(dropped)) <= 1);
      await logs.stillServes(baseline);
    });

    test(`slowloris: headers or a body that never finish are cut off after LOGS_REQUEST_TIMEOUT (${REQUEST_TIMEOUT}) with 408 or a close, and the service answers others meanwhile`, async () => {
      const baseline = logs.baseline();
      const bodyStarted = `${requestHead('POST', '/api/v1/_elastic/_bulk', { authorization: logs.admin, 'content-type': 'application/x-ndjson', 'content-length': 10_000 })}{"index":{}}\n`;
      const slow = [
        ...Array.from({ length: 5 }, () =>
          rawExchange(logs.port, ['POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '], { timeoutMs: 20_000 }),
        ),
        ...Array.from({ length: 5 }, () => rawExchange(logs.port, [bodyStarted], { timeoutMs: 20_000 })),
      ];
      // While they hang, others are served.
      assert.equal((await logs.call('GET', '/healthz')).status, 200);
      // Stalled headers get Node's 408; a stalled body is closed by the body deadline. None waits for the client's 20 s.
      for (const exchange of await Promise.all(slow)) assertRefused(exchange, 408, 'slowloris');
      await logs.stillServes(baseline);
    });
  });
}
