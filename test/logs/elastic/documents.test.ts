import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, errors } from '@elastic/elasticsearch';
import { DIALECTS } from '../../helpers/databases.js';
import { listenOnLoopback } from '../../helpers/listen.js';
import { PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * The document and paging APIs of the Elasticsearch-compatible API (docs/elasticsearch.md): one
 * `_id` from write to read, `_doc`/`_create`/get/HEAD/`_mget`/`_count`, deletion refused, scroll,
 * point in time and search_after with a tiebreaker, and bad input as 400s in Elasticsearch's shape.
 */

const BASE = Date.UTC(2026, 10, 20, 8, 0, 0);

for (const dialect of DIALECTS) {
  describe(`Elasticsearch document and paging APIs [${dialect}]`, () => {
    let logs: TestLogs;
    let node: string;
    let writerAuth: string;
    let readerAuth: string;
    let es: Client;
    const marker = uniqueName('esdoc').toLowerCase();
    const index = `docs-${marker}`;

    /** A raw request, for status codes and bodies the client would turn into exceptions. */
    const raw = async (method: string, path: string, body?: unknown, auth = writerAuth) => {
      const response = await fetch(`${node}${path}`, {
        method,
        headers: { authorization: auth, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      const json =
        text !== '' && response.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as any) : undefined;
      return { status: response.status, headers: response.headers, text, json };
    };

    before(async () => {
      logs = await startTestLogs(dialect);
      node = `http://127.0.0.1:${await listenOnLoopback(logs.app)}/api/v1/_elastic`;
      const writer = await logs.userWith(['logs:read', 'logs:write']);
      const reader = await logs.userWith(['logs:read']);
      writerAuth = `Basic ${Buffer.from(`${writer.username}:${PASSWORD}`).toString('base64')}`;
      readerAuth = `Basic ${Buffer.from(`${reader.username}:${PASSWORD}`).toString('base64')}`;
      es = new Client({ node, auth: { username: writer.username, password: PASSWORD }, maxRetries: 0 });
    });
    after(async () => logs.close());

    test('the _id _bulk and _doc answer with is the _id search, get, mget and ids queries show', async () => {
      const bulk = await es.bulk({
        refresh: 'wait_for',
        operations: [
          { index: { _index: index } },
          { '@timestamp': new Date(BASE).toISOString(), message: `generated ${marker}`, level: 'info' },
          { index: { _index: index, _id: `${marker}-given` } },
          { '@timestamp': new Date(BASE + 1).toISOString(), message: `given ${marker}`, level: 'warn' },
        ],
      });
      assert.equal(bulk.errors, false);
      const generated = bulk.items[0]!.index!._id!;
      assert.match(generated, /^[A-Za-z0-9_-]{20}$/);
      const single = await es.index({ index, document: { '@timestamp': new Date(BASE + 2).toISOString(), message: `single ${marker}` } });
      assert.equal(single.result, 'created');
      const search = await es.search({ index, q: `"${marker}"`, sort: '@timestamp:asc' });
      assert.deepEqual(
        search.hits.hits.map((hit) => hit._id),
        [generated, `${marker}-given`, single._id],
      );
      const byIds = await es.search({ index: '*', query: { ids: { values: [generated, single._id] } } });
      assert.deepEqual(new Set(byIds.hits.hits.map((hit) => hit._id)), new Set([generated, single._id]));
      const got = await es.get({ index, id: generated });
      assert.equal(got.found, true);
      assert.equal((got._source as { message: string }).message, `generated ${marker}`);
      assert.equal((got._source as { _id?: string })._id, undefined, '_id is metadata, not part of _source');
      const many = await es.mget({ index, ids: [single._id, 'nope', `${marker}-given`] });
      assert.deepEqual(
        many.docs.map((doc) => [doc._id, 'found' in doc ? doc.found : 'error']),
        [
          [single._id, true],
          ['nope', false],
          [`${marker}-given`, true],
        ],
      );
    });

    test('an entry stored by OTLP is found by the _id its hits show: get, HEAD, mget, ids query', async () => {
      const text = `otlp${marker}`;
      const otlp = await logs.request({
        method: 'POST',
        url: '/v1/logs',
        headers: { authorization: writerAuth, 'content-type': 'application/json' },
        payload: {
          resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: `${BigInt(BASE) * 1_000_000n}`, body: { stringValue: text } }] }] }],
        },
      });
      assert.equal(otlp.statusCode, 200, otlp.body);
      const hits = (await es.search({ q: text })).hits.hits;
      assert.equal(hits.length, 1);
      const { _id: id, _index: shownIndex } = hits[0]!;
      assert.match(id!, /^\d+$/);
      assert.equal(shownIndex, 'logs');
      const got = await es.get<{ message: string }>({ index: 'logs', id: id! });
      assert.deepEqual([got.found, got._id, got._source!.message], [true, id, text]);
      assert.deepEqual(
        [
          await es.exists({ index: 'logs', id: id! }),
          await es.exists({ index, id: id! }),
          await es.exists({ index: 'logs', id: '999999999999' }),
        ],
        [true, false, false],
      );
      assert.deepEqual(
        (await es.mget({ index: 'logs', ids: [id!, '999999999999', '__proto__'] })).docs.map((doc) => 'found' in doc && doc.found),
        [true, false, false],
      );
      const byIds = await es.search({ query: { ids: { values: [id!] } } });
      assert.deepEqual(
        byIds.hits.hits.map((hit) => hit._id),
        [id],
      );
      const byQuery = await es.search({ q: `_id:${id}` });
      assert.deepEqual(
        byQuery.hits.hits.map((hit) => hit._id),
        [id],
      );
    });

    test('_doc with an id, _create (409 on a known id), get, HEAD of documents and indices, _count', async () => {
      const put = await raw('PUT', `/${index}/_doc/${marker}-one?refresh=true`, {
        '@timestamp': BASE + 10,
        message: `one ${marker}`,
        latency: 7,
      });
      assert.equal(put.status, 201);
      assert.deepEqual(
        { _index: put.json._index, _id: put.json._id, result: put.json.result },
        { _index: index, _id: `${marker}-one`, result: 'created' },
      );
      const again = await raw('PUT', `/${index}/_doc/${marker}-one`, { '@timestamp': BASE + 10, message: `changed ${marker}` });
      assert.equal(again.status, 200);
      assert.equal(again.json.result, 'noop', 'logs are immutable: the first document is kept');
      const conflict = await raw('PUT', `/${index}/_create/${marker}-one`, { message: 'x' });
      assert.equal(conflict.status, 409);
      assert.equal(conflict.json.error.type, 'version_conflict_engine_exception');
      const created = await es.create({ index, id: `${marker}-two`, document: { '@timestamp': BASE + 11, message: `two ${marker}` } });
      assert.equal(created.result, 'created');
      await assert.rejects(
        es.create({ index, id: `${marker}-two`, document: { message: 'again' } }),
        (error: unknown) => error instanceof errors.ResponseError && error.statusCode === 409,
      );

      const got = await raw('GET', `/${index}/_doc/${marker}-one`, undefined, readerAuth);
      assert.equal(got.status, 200);
      assert.deepEqual(got.json._source, { '@timestamp': new Date(BASE + 10).toISOString(), message: `one ${marker}`, latency: 7 });
      const partial = await raw('GET', `/${index}/_doc/${marker}-one?_source=latency`, undefined, readerAuth);
      assert.deepEqual(partial.json._source, { latency: 7 });
      const missing = await raw('GET', `/${index}/_doc/${marker}-nope`, undefined, readerAuth);
      assert.deepEqual([missing.status, missing.json], [404, { _index: index, _id: `${marker}-nope`, found: false }]);

      for (const [path, status] of [
        [`/${index}/_doc/${marker}-one`, 200],
        [`/${index}/_doc/${marker}-nope`, 404],
        [`/${index}`, 200],
        [`/nothing-${marker}`, 404],
      ] as const) {
        const head = await raw('HEAD', path, undefined, readerAuth);
        assert.deepEqual([path, head.status, head.text], [path, status, '']);
      }
      assert.equal(await es.exists({ index, id: `${marker}-two` }), true);
      assert.equal(await es.exists({ index, id: `${marker}-three` }), false);
      assert.equal(await es.indices.exists({ index }), true);
      assert.equal(await es.indices.exists({ index: `nothing-${marker}` }), false);

      assert.deepEqual(await es.count({ index, q: `"${marker}"` }).then((r) => r.count), 5);
      assert.equal((await raw('POST', `/${index}/_count`, { query: { term: { latency: 7 } } }, readerAuth)).json.count, 1);
      assert.equal((await raw('GET', `/_count?q=${encodeURIComponent(`"two ${marker}"`)}`, undefined, readerAuth)).json.count, 1);
      assert.deepEqual((await es.indices.refresh({ index }))._shards, { total: 1, successful: 1, failed: 0 });
    });

    test('deletion is a 405 naming why; bad input is a 400 in Elasticsearch shape', async () => {
      const deleted = await raw('DELETE', `/${index}/_doc/${marker}-one`);
      assert.equal(deleted.status, 405);
      assert.match(deleted.json.error.reason, /append-only/);
      assert.equal((await raw('DELETE', `/${index}`)).status, 405);
      assert.equal((await raw('GET', `/${index}/_doc/${marker}-one`, undefined, readerAuth)).status, 200, 'still there');
      const cases: [string, string, unknown, string][] = [
        ['PUT', `/${index}/_doc/x`, '{not json', 'parsing_exception'],
        ['PUT', `/${index}/_doc/x`, '[1]', 'mapper_parsing_exception'],
        ['PUT', `/Upper/_doc/x`, { message: 'x' }, 'invalid_index_name_exception'],
        ['POST', `/_mget`, { docs: [{ _index: index, _id: 'x'.repeat(513) }] }, 'action_request_validation_exception'],
        ['POST', `/${index}/_doc`, { '@timestamp': 'yesterday' }, 'mapper_parsing_exception'],
        ['PUT', `/${index}/_doc/x?refresh=sometimes`, { message: 'x' }, 'parsing_exception'],
        ['PUT', `/${index}/_doc/x?version=3`, { message: 'x' }, 'illegal_argument_exception'],
        ['GET', `/${index}/_doc/x?_source_excludes=a`, undefined, 'illegal_argument_exception'],
        ['POST', `/_mget`, { docs: [{ _id: 'x' }] }, 'action_request_validation_exception'],
        ['POST', `/_mget`, { docs: 'x' }, 'parsing_exception'],
        ['POST', `/${index}/_mget`, {}, 'action_request_validation_exception'],
        ['POST', `/${index}/_count`, { size: 3 }, 'parsing_exception'],
        ['POST', `/${index}/_search?scroll=forever`, {}, 'parsing_exception'],
        ['POST', `/${index}/_search?scroll=2d`, {}, 'illegal_argument_exception'],
        ['POST', `/${index}/_search?scroll=1m`, { from: 5 }, 'action_request_validation_exception'],
        ['POST', `/_search/scroll`, { scroll_id: 'garbage' }, 'illegal_argument_exception'],
        ['POST', `/_search/scroll`, {}, 'action_request_validation_exception'],
        ['POST', `/${index}/_pit`, undefined, 'action_request_validation_exception'],
        ['POST', `/_search`, { pit: { id: 'garbage' } }, 'illegal_argument_exception'],
        ['POST', `/_search`, { sort: [{ latency: 'asc' }, { '@timestamp': 'asc' }] }, 'illegal_argument_exception'],
        ['POST', `/_search`, { sort: [{ '@timestamp': 'asc' }, { _shard_doc: 'desc' }] }, 'illegal_argument_exception'],
        ['POST', `/_search`, { sort: [{ latency: 'asc' }], search_after: [1] }, 'illegal_argument_exception'],
        ['POST', `/_search`, { search_after: ['yesterday', 'x'] }, 'parsing_exception'],
      ];
      for (const [method, path, body, type] of cases) {
        const answer = await raw(method, path, body);
        assert.deepEqual([method, path, answer.status, answer.json?.error?.type], [method, path, 400, type], answer.text);
      }
    });

    test('scroll, point in time and search_after with a tiebreaker read every match once, past 10,000', async () => {
      const total = 10_250;
      const scrollIndex = `scroll-${marker}`;
      // Every 4 documents share a millisecond: the tiebreaker decides their order.
      const lines: string[] = [];
      for (let i = 0; i < total; i += 1) {
        lines.push(JSON.stringify({ index: { _index: scrollIndex, _id: `s${i}` } }));
        lines.push(JSON.stringify({ '@timestamp': BASE + Math.floor(i / 4), message: `scroll ${marker}`, n: i }));
      }
      const stored = await raw('POST', '/_bulk', lines.join('\n') + '\n');
      assert.equal(stored.json.errors, false);

      const seen = new Set<string>();
      let page = await es.search({ index: scrollIndex, scroll: '1m', size: 3000, sort: ['_doc'], q: `"${marker}"` });
      assert.deepEqual(page.hits.total, { value: 10_000, relation: 'gte' });
      let pages = 0;
      while (page.hits.hits.length > 0) {
        pages += 1;
        for (const hit of page.hits.hits) {
          assert.equal(seen.has(hit._id!), false, `${hit._id} twice`);
          seen.add(hit._id!);
        }
        page = await es.scroll({ scroll_id: page._scroll_id!, scroll: '1m' });
      }
      assert.equal(seen.size, total);
      assert.equal(pages, 4);
      // The page size given in the URL (as OpenSearch's scroll helpers send it) holds for every page.
      let urlPage = await raw('POST', `/${scrollIndex}/_search?scroll=1m&size=4000`, { query: { match_all: {} } });
      const sizes: number[] = [];
      while (urlPage.json.hits.hits.length > 0) {
        sizes.push(urlPage.json.hits.hits.length);
        urlPage = await raw('POST', '/_search/scroll?scroll=1m', { scroll_id: urlPage.json._scroll_id });
      }
      assert.deepEqual(sizes, [4000, 4000, 2250]);
      assert.deepEqual(await es.clearScroll({ scroll_id: page._scroll_id! }), { succeeded: true, num_freed: 1 });

      const pit = await es.openPointInTime({ index: scrollIndex, keep_alive: '1m' });
      const ordered: number[] = [];
      let after: unknown[] | undefined;
      for (;;) {
        const result = await es.search<{ n: number }>({
          pit: { id: pit.id, keep_alive: '1m' },
          size: 4000,
          sort: [{ '@timestamp': 'asc' }, { _shard_doc: 'asc' }],
          track_total_hits: false,
          ...(after ? { search_after: after as never } : {}),
        });
        assert.ok(result.pit_id);
        if (result.hits.hits.length === 0) break;
        ordered.push(...result.hits.hits.map((hit) => hit._source!.n));
        after = result.hits.hits.at(-1)!.sort;
      }
      assert.equal(ordered.length, total);
      const times = ordered.map((n) => Math.floor(n / 4));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        'in time order',
      );
      assert.equal(new Set(ordered).size, total);
      assert.deepEqual(await es.closePointInTime({ id: pit.id }), { succeeded: true, num_freed: 1 });
      const pitWithIndex = await raw('POST', `/${scrollIndex}/_search`, { pit: { id: pit.id } });
      assert.equal(pitWithIndex.status, 400);

      // search_after with only the time: past every document of that millisecond.
      const pastTime = await es.search({ index: scrollIndex, sort: [{ '@timestamp': 'asc' }], search_after: [BASE + 1], size: 3 });
      assert.deepEqual(
        pastTime.hits.hits.map((hit) => hit._id),
        ['s8', 's9', 's10'],
      );
    });

    test("OpenSearch's point-in-time API: create, search in it, delete, list; bad ids are 400s", async () => {
      const created = await raw('POST', `/${index}/_search/point_in_time?keep_alive=1m`, undefined, readerAuth);
      assert.equal(created.status, 200);
      assert.deepEqual(Object.keys(created.json).sort(), ['_shards', 'creation_time', 'pit_id']);
      assert.equal(created.json.creation_time, logs.clock.now());
      const inPit = await raw('POST', '/_search', { pit: { id: created.json.pit_id, keep_alive: '1m' }, size: 100 }, readerAuth);
      assert.equal(inPit.status, 200);
      assert.ok(inPit.json.hits.hits.length > 0);
      assert.ok(inPit.json.hits.hits.every((hit: any) => hit._index === index));
      assert.deepEqual((await raw('GET', '/_search/point_in_time/_all', undefined, readerAuth)).json, { pits: [] });
      const deleted = await raw('DELETE', '/_search/point_in_time', { pit_id: [created.json.pit_id, '__proto__'] }, readerAuth);
      assert.deepEqual([deleted.status, deleted.json.error?.type], [400, 'illegal_argument_exception']);
      const closed = await raw('DELETE', '/_search/point_in_time', { pit_id: [created.json.pit_id] }, readerAuth);
      assert.deepEqual(closed.json, { pits: [{ successful: true, pit_id: created.json.pit_id }] });
      assert.deepEqual((await raw('DELETE', '/_search/point_in_time/_all', undefined, readerAuth)).json, { pits: [] });
      for (const [path, body, type] of [
        [`/${index}/_search/point_in_time`, undefined, 'action_request_validation_exception'],
        [`/${index}/_search/point_in_time?keep_alive=2d`, undefined, 'illegal_argument_exception'],
        [`/${index}/_search/point_in_time?keep_alive=1m&__proto__=1`, undefined, 'illegal_argument_exception'],
      ] as const) {
        const answer = await raw('POST', path, body, readerAuth);
        assert.deepEqual([path, answer.status, answer.json.error.type], [path, 400, type]);
      }
      for (const body of [{}, { pit_id: [] }, '[]']) {
        const answer = await raw('DELETE', '/_search/point_in_time', body, readerAuth);
        assert.deepEqual([answer.status, answer.json.error.type], [400, 'action_request_validation_exception']);
      }
      logs.clock.advance(60_001);
      const expired = await raw('DELETE', '/_search/point_in_time', { pit_id: created.json.pit_id }, readerAuth);
      assert.deepEqual(expired.json, { pits: [{ successful: false, pit_id: created.json.pit_id }] });
    });

    test('filter_path on _bulk (as Logstash sends it), _search, _msearch, _count, _doc, _mget and _cat JSON; a bad one is a 400', async () => {
      const index = `fp-${marker}`;
      const lines = [
        { create: { _index: index, _id: `${marker}-fp` } },
        { '@timestamp': new Date(BASE + 5).toISOString(), message: `filtered ${marker}`, level: 'info' },
        { create: { _index: index } },
        { '@timestamp': 'not a time', message: 'bad' },
      ];
      const bulkAnswer = await raw(
        'POST',
        '/_bulk?filter_path=errors,items.*.error,items.*.status',
        lines.map((line) => JSON.stringify(line)).join('\n') + '\n',
      );
      assert.equal(bulkAnswer.status, 200);
      assert.deepEqual(Object.keys(bulkAnswer.json), ['errors', 'items']);
      assert.deepEqual(
        bulkAnswer.json.items.map((item: any) => [Object.keys(item.create).sort(), item.create.status]),
        [
          [['status'], 201],
          [['error', 'status'], 400],
        ],
      );
      const search = await raw('POST', `/${index}/_search?filter_path=hits.hits._id,hits.hits._source.message,-took`, {
        query: { ids: { values: [`${marker}-fp`] } },
      });
      assert.deepEqual(search.json, { hits: { hits: [{ _id: `${marker}-fp`, _source: { message: `filtered ${marker}` } }] } });
      const none = await raw('POST', `/${index}/_search?filter_path=hits.hits._source`, { query: { ids: { values: ['nope'] } } });
      assert.deepEqual(none.json, {});
      const msearch = await raw(
        'POST',
        '/_msearch?filter_path=responses.hits.total.value',
        `{"index":"${index}"}\n{"query":{"ids":{"values":["${marker}-fp"]}}}\n`,
      );
      assert.deepEqual(msearch.json, { responses: [{ hits: { total: { value: 1 } } }] });
      assert.deepEqual((await raw('GET', `/${index}/_count?filter_path=count`)).json, { count: 1 });
      assert.deepEqual((await raw('GET', `/${index}/_doc/${marker}-fp?filter_path=found,_source.level`)).json, {
        found: true,
        _source: { level: 'info' },
      });
      assert.deepEqual((await raw('POST', `/${index}/_mget?filter_path=docs._id,docs.found`, { ids: [`${marker}-fp`, 'nope'] })).json, {
        docs: [
          { _id: `${marker}-fp`, found: true },
          { _id: 'nope', found: false },
        ],
      });
      assert.deepEqual((await raw('GET', `/_cat/indices/${index}?format=json&filter_path=index`, undefined, readerAuth)).json, [{ index }]);
      const bad = await raw('GET', `/${index}/_count?filter_path=a..b`);
      assert.deepEqual([bad.status, bad.json.error.type], [400, 'parsing_exception']);
      const twice = await raw('GET', `/${index}/_count?filter_path=count&filter_path=_shards`);
      assert.deepEqual([twice.status, twice.json.error.type], [400, 'parsing_exception']);
    });

    test('an expired scroll or point in time is a 404 search_context_missing_exception', async () => {
      const expired = await raw('POST', `/${index}/_search?scroll=1m`, { size: 1 }, readerAuth);
      assert.equal(expired.status, 200);
      const pit = await raw('POST', `/${index}/_pit?keep_alive=2m`, undefined, readerAuth);
      logs.clock.advance(60_001);
      const alive = await raw('POST', '/_search', { pit: { id: pit.json.id } }, readerAuth);
      assert.equal(alive.status, 200);
      const next = await raw('POST', '/_search/scroll', { scroll_id: expired.json._scroll_id }, readerAuth);
      assert.deepEqual([next.status, next.json.error.type], [404, 'search_context_missing_exception']);
      logs.clock.advance(60_000);
      const search = await raw('POST', '/_search', { pit: { id: pit.json.id } }, readerAuth);
      assert.deepEqual([search.status, search.json.error.type], [404, 'search_context_missing_exception']);
    });

    test('start-up calls: templates, lifecycle policies and pipelines accepted with a Warning; _xpack, _license, _cat', async () => {
      for (const path of ['/_index_template/t1', '/_template/t1', '/_component_template/c1', '/_ilm/policy/p1', '/_ingest/pipeline/p1']) {
        for (const method of ['PUT', 'POST']) {
          const answer = await raw(method, path, { anything: true });
          assert.deepEqual([path, method, answer.status, answer.json], [path, method, 200, { acknowledged: true }]);
          assert.match(answer.headers.get('warning') ?? '', /^299 Elasticsearch-\S+ ".*accepted and ignored/);
        }
        assert.equal((await raw('GET', path)).status, 200);
        assert.equal((await raw('PUT', path, '[]')).status, 400);
      }
      const xpack = await raw('GET', '/_xpack', undefined, readerAuth);
      assert.equal(xpack.json.features.ilm.enabled, true);
      assert.equal(xpack.json.license.status, 'active');
      const indices = await es.cat.indices({ index: `docs-${marker}*`, format: 'json' });
      assert.deepEqual(
        indices.map((row) => [row.index, row['docs.count']]),
        [[index, '5']],
      );
      const text = await raw('GET', `/_cat/indices/${index}`, undefined, readerAuth);
      assert.equal(text.text, `green open ${index} ${index} 1 0 5 0\n`);
      const created = await raw('PUT', `/new-${marker}`, { settings: { number_of_shards: 3 } });
      assert.deepEqual(created.json, { acknowledged: true, shards_acknowledged: true, index: `new-${marker}` });
    });
  });
}
