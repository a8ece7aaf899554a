import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_BOOL_DEPTH } from '../../../src/logs/modules/query/elastic-dsl.js';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';

/**
 * Limits of the Elasticsearch-compatible query DSL (docs/elasticsearch.md "Limits"). The limit is
 * checked before the store is asked anything, so one dialect is enough.
 */
describe('Elasticsearch query DSL limits', () => {
  let logs: TestLogs;
  before(async () => {
    logs = await startTestLogs('sqlite');
  });
  after(async () => logs.close());

  /** A query of `depth` nested bools around one term, as JSON text (too deep for JSON.stringify's stack). */
  function nested(depth: number, clause = (_i: number) => 'must'): string {
    let query = '{"term":{"level":"error"}}';
    for (let i = 0; i < depth; i += 1) query = `{"bool":{"${clause(i)}":[${query}]}}`;
    return query;
  }

  async function search(query: string) {
    return logs.request({
      method: 'POST',
      url: '/api/v1/_elastic/_search',
      headers: { ...(await logs.admin()), 'content-type': 'application/json' },
      payload: `{"size":1,"query":${query}}`,
    });
  }

  test(`bools nested ${MAX_BOOL_DEPTH} deep are answered; deeper ones, even 1,500 deep, are a 400 parsing_exception`, async () => {
    assert.equal((await search(nested(MAX_BOOL_DEPTH))).statusCode, 200);
    for (const depth of [MAX_BOOL_DEPTH + 1, 1_500]) {
      const refused = await search(nested(depth));
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().error.type, 'parsing_exception');
      assert.match(refused.json().error.reason, new RegExp(`deeper than ${MAX_BOOL_DEPTH}`));
    }
    // must_not and should nest as deep as must.
    assert.equal((await search(nested(MAX_BOOL_DEPTH + 1, (i) => (i % 2 === 0 ? 'must_not' : 'should')))).statusCode, 400);
  });
});
