import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * `_bulk` details (docs/elasticsearch.md "Writing: _bulk", docs/logs-api.md "Elasticsearch bulk"):
 * the `_id` window (LOGS_INGEST_ID_WINDOW) on the injected clock, and rsyslog's fields.
 */

const HOUR = 3_600_000;
const ndjson = (lines: object[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

interface Entry {
  '@timestamp': string;
  message: string;
  level: string | null;
  service: string | null;
  host: string | null;
  attributes: Record<string, unknown>;
}

for (const dialect of DIALECTS) {
  describe(`Elasticsearch bulk: the _id window [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_INGEST_ID_WINDOW: '1h' });
    });
    after(async () => logs.close());

    /** One `create` (or `index`) of a document with this `_id`; the item's status and result. */
    async function send(id: string, marker: string, action: 'create' | 'index' = 'create') {
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: await logs.admin(),
        payload: ndjson([{ [action]: { _id: id } }, { message: `retried ${marker}` }]),
      });
      assert.equal(response.statusCode, 200, response.body);
      const item = response.json().items[0][action] as { status: number; result?: string };
      return `${item.status} ${item.result ?? 'conflict'}`;
    }

    async function stored(marker: string): Promise<number> {
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_search',
        headers: await logs.admin(),
        payload: { query: { match_phrase: { message: `retried ${marker}` } }, size: 0, track_total_hits: true },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json().hits.total.value as number;
    }

    // The service holds at most three log batches between decoding and commit, decoded one at a time (pipeline.ts LogBatches): the others wait their turn.
    test(
      'more batches at once than are parsed at once: each answered once stored, a refused one frees its place',
      { timeout: 120_000 },
      async () => {
        const marker = uniqueName('concurrent').toLowerCase();
        const headers = await logs.admin();
        const batch = (n: number) =>
          ndjson([
            { create: { _id: `${marker}-same` } },
            { message: `retried ${marker} same ${n}` },
            ...Array.from({ length: 50 }, (_, i) => [{ index: {} }, { message: `retried ${marker} b${n} e${i}` }]).flat(),
          ]);
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, n) =>
            logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: n === 3 ? '\n' : batch(n) }),
          ),
        );
        assert.deepEqual(
          answers.map((answer) => answer.statusCode),
          [200, 200, 200, 400, 200, 200, 200, 200],
        );
        const sameId = answers.filter((_, n) => n !== 3).map((answer) => answer.json().items[0].create.status as number);
        assert.deepEqual(sameId.sort(), [201, 409, 409, 409, 409, 409, 409], 'one _id sent in concurrent batches is stored once');
        assert.equal(await stored(marker), 7 * 50 + 1);
      },
    );

    test('an _id is remembered until LOGS_INGEST_ID_WINDOW has passed, then the same _id is stored again', async () => {
      const marker = uniqueName('window').toLowerCase();
      const id = `${marker}-id`;
      assert.equal(await send(id, marker), '201 created');
      logs.clock.advance(HOUR - 1);
      assert.equal(await send(id, marker), '409 conflict', 'still within the window');
      assert.equal(await send(id, marker, 'index'), '200 noop');
      assert.equal(await stored(marker), 1);

      logs.clock.advance(1);
      assert.equal(await send(id, marker), '201 created', 'the window has passed: the id is forgotten');
      assert.equal(await stored(marker), 2);
      assert.equal(await send(id, marker), '409 conflict', 'and remembered anew from its second storing');
    });

    test("the background job's forgetDocumentIds removes ids past their window only; a removed id is stored again", async () => {
      const marker = uniqueName('forget').toLowerCase();
      const id = `${marker}-id`;
      assert.equal(await send(id, marker), '201 created');
      logs.clock.advance(HOUR / 2);
      await logs.store.forgetDocumentIds(logs.clock.now());
      assert.equal(await send(id, marker), '409 conflict', 'an id within its window is kept by the job');

      logs.clock.advance(HOUR);
      assert.ok((await logs.store.forgetDocumentIds(logs.clock.now())) >= 1, 'the expired id is removed');
      assert.equal(await send(id, marker), '201 created');
      assert.equal(await stored(marker), 2);
    });
  });

  describe(`Elasticsearch bulk: rsyslog's fields [${dialect}]`, () => {
    let logs: TestLogs;
    before(async () => {
      logs = await startTestLogs(dialect);
    });
    after(async () => logs.close());

    test("omelasticsearch's default template and the usual rsyslog properties map onto time, host, service and level", async () => {
      const marker = uniqueName('rsyslog').toLowerCase();
      const headers = await logs.admin();
      const response = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/rsyslog-app/_bulk',
        headers: { ...headers, 'content-type': 'application/x-ndjson' },
        payload: ndjson([
          // omelasticsearch's default template (StdJSONFmt), with programname and syslogtag added.
          { index: {} },
          {
            message: ` accepted publickey ${marker} one`,
            fromhost: 'web-1',
            facility: 'auth',
            priority: 'warning',
            timereported: '2026-11-24T17:00:00.123456+07:00',
            timegenerated: '2026-11-24T10:00:05.000000+00:00',
            programname: 'sshd',
            syslogtag: 'sshd[42]:',
          },
          // No programname: the program of syslogtag; no timereported: timegenerated; severity by name.
          { index: {} },
          {
            message: `job failed ${marker} two`,
            sysloghost: 'db-1',
            syslogtag: 'CRON[7]:',
            severity: 'err',
            timegenerated: '2026-11-24T10:01:00Z',
          },
          // Syslog severity numbers, as text and as a JSON number.
          { index: {} },
          { message: `disk ${marker} three`, fromhost: 'web-2', 'app-name': 'kernel', priority: '2', timereported: '2026-11-24T10:02:00Z' },
          { index: {} },
          {
            message: `slow ${marker} four`,
            fromhost: 'web-2',
            programname: 'nginx',
            syslogseverity: 4,
            timereported: '2026-11-24T10:03:00Z',
          },
          { index: {} },
          {
            message: `started ${marker} five`,
            fromhost: 'web-3',
            programname: 'systemd',
            'syslogseverity-text': 'notice',
            timereported: '2026-11-24T10:04:00Z',
          },
        ]),
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().errors, false, response.body);

      const found = await logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers,
        payload: {
          query: marker,
          timeRange: { from: '2026-11-24T00:00:00Z', to: '2026-11-25T00:00:00Z' },
          sort: { field: '@timestamp', order: 'asc' },
          limit: 10,
        },
      });
      assert.equal(found.statusCode, 200, found.body);
      const entries = found.json().data as Entry[];
      assert.deepEqual(
        entries.map((entry) => [entry['@timestamp'], entry.host, entry.service, entry.level, entry.attributes.severity_text]),
        [
          ['2026-11-24T10:00:00.123Z', 'web-1', 'sshd', 'warn', 'warning'],
          ['2026-11-24T10:01:00.000Z', 'db-1', 'CRON', 'error', 'err'],
          ['2026-11-24T10:02:00.000Z', 'web-2', 'kernel', 'fatal', '2'],
          ['2026-11-24T10:03:00.000Z', 'web-2', 'nginx', 'warn', '4'],
          ['2026-11-24T10:04:00.000Z', 'web-3', 'systemd', 'info', 'notice'],
        ],
      );
      // A property that became a field is not an attribute besides; the others stay attributes (the
      // time rsyslog received a line, timegenerated, when timereported gave the time).
      const first = entries[0]!.attributes;
      for (const taken of ['fromhost', 'priority', 'timereported', 'programname']) assert.equal(first[taken], undefined, taken);
      assert.deepEqual([first.facility, first.syslogtag, first.timegenerated], ['auth', 'sshd[42]:', '2026-11-24T10:00:05.000000+00:00']);
      assert.equal(first._index, 'rsyslog-app');
      assert.equal(entries[1]!.attributes.timegenerated, undefined);

      // Searched by the mapped fields.
      const byFields = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/rsyslog-*/_search',
        headers,
        payload: { query: { query_string: { query: `${marker} AND host:web-2 AND level:warning` } }, track_total_hits: true },
      });
      assert.deepEqual(
        (byFields.json().hits.hits as { _source: { message: string } }[]).map((hit) => hit._source.message),
        [`slow ${marker} four`],
      );
    });
  });
}
