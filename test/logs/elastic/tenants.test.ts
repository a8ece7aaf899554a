import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { PASSWORD, startTestLogs, uniqueName, type TestLogs } from '../../helpers/logs.js';

/**
 * Tenants on the Elasticsearch-compatible API (docs/elasticsearch.md "Credentials and tenants"):
 * whatever the credential (HTTP Basic, bearer token, API key), a caller writes and reads its own
 * tenant only; X-Tenant-Id names another tenant only for a user with tenants:manage, as on the rest
 * of the logs API; an API key stays in the tenant it was made for.
 */

type Headers = Record<string, string>;

interface Tenant {
  id: string;
  /** The tenant's user (logs:read and logs:write) as HTTP Basic, as a bearer token, and as an API key. */
  credentials: { name: string; headers: Headers }[];
}

const ndjson = (lines: object[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

for (const dialect of DIALECTS) {
  describe(`Elasticsearch-compatible API: tenants [${dialect}]`, () => {
    let logs: TestLogs;
    let a: Tenant;
    let b: Tenant;

    const elastic = (method: 'GET' | 'POST' | 'PUT', path: string, headers: Headers, payload?: string) =>
      logs.request({
        method,
        url: `/api/v1/_elastic${path}`,
        headers: { ...headers, 'content-type': 'application/x-ndjson' },
        ...(payload === undefined ? {} : { payload }),
      });

    /** Documents of one tenant: its own index name and field, and an `_id` both tenants use. */
    const documentsOf = (tenant: string) =>
      ndjson([
        { index: { _index: `app-${tenant}`, _id: 'shared-id' } },
        { message: `secret of ${tenant} first`, [`only_${tenant}`]: 1, level: 'error' },
        { create: { _index: `app-${tenant}` } },
        { message: `secret of ${tenant} second`, [`only_${tenant}`]: 2, level: 'info' },
      ]);

    async function tenantWithCredentials(name: string): Promise<Tenant> {
      const admin = await logs.admin();
      const created = await logs.request({ method: 'POST', url: '/api/tenants', headers: admin, payload: { name: uniqueName(name) } });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      const user = await logs.userWith(['logs:read', 'logs:write'], { tenantId: id });
      const key = await logs.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: user.headers,
        payload: { name: uniqueName('key'), permissions: ['logs:read', 'logs:write'] },
      });
      assert.equal(key.statusCode, 201, key.body);
      return {
        id,
        credentials: [
          { name: 'HTTP Basic', headers: { authorization: `Basic ${Buffer.from(`${user.username}:${PASSWORD}`).toString('base64')}` } },
          { name: 'bearer token', headers: user.headers },
          { name: 'API key', headers: { authorization: `ApiKey ${key.json().encoded as string}` } },
        ],
      };
    }

    /** What one caller sees through every reading route. */
    async function view(headers: Headers) {
      const search = await elastic(
        'POST',
        '/_search',
        headers,
        JSON.stringify({ size: 100, track_total_hits: true, aggs: { indices: { terms: { field: '_index' } } } }),
      );
      assert.equal(search.statusCode, 200, search.body);
      const msearch = await elastic(
        'POST',
        '/_msearch',
        headers,
        ndjson([{ index: '*' }, { size: 100 }, { index: 'app-*' }, { size: 0, track_total_hits: true }]),
      );
      assert.equal(msearch.statusCode, 200, msearch.body);
      const mapping = await elastic('GET', '/_mapping', headers);
      assert.equal(mapping.statusCode, 200, mapping.body);
      const caps = await elastic('GET', '/_field_caps?fields=only_*', headers);
      assert.equal(caps.statusCode, 200, caps.body);
      const hits = search.json().hits.hits as { _index: string; _id: string; _source: { message: string } }[];
      const [all, counted] = msearch.json().responses as { hits: { total: { value: number }; hits: { _source: { message: string } }[] } }[];
      return {
        messages: hits.map((hit) => hit._source.message).sort(),
        ids: hits.map((hit) => hit._id),
        indices: (search.json().aggregations.indices.buckets as { key: string }[]).map((bucket) => bucket.key),
        msearchMessages: all!.hits.hits.map((hit) => hit._source.message).sort(),
        msearchTotal: counted!.hits.total.value,
        mappedFields: Object.keys(mapping.json().logs.mappings.properties as object).filter((field) => field.startsWith('only_')),
        capsFields: Object.keys(caps.json().fields as object),
      };
    }

    const ownView = (tenant: 'a' | 'b') => ({
      messages: [`secret of ${tenant} first`, `secret of ${tenant} second`],
      indices: [`app-${tenant}`],
      msearchTotal: 2,
      fields: [`only_${tenant}`],
    });

    before(async () => {
      logs = await startTestLogs(dialect);
      a = await tenantWithCredentials('tenant-a');
      b = await tenantWithCredentials('tenant-b');
    });
    after(async () => logs.close());

    test('_bulk stores into the writer’s own tenant; the same _id in another tenant is another document', async () => {
      // Tenant a writes with HTTP Basic, tenant b with its API key: both into their own tenant only.
      for (const [tenant, headers] of [
        ['a', a.credentials[0]!.headers],
        ['b', b.credentials[2]!.headers],
      ] as const) {
        const response = await elastic('POST', '/_bulk', headers, documentsOf(tenant));
        assert.equal(response.statusCode, 200, response.body);
        const result = response.json();
        assert.equal(result.errors, false, response.body);
        assert.deepEqual(
          (result.items as Record<string, { status: number; result: string }>[]).map((item) => Object.values(item)[0]!.result),
          ['created', 'created'],
          `tenant ${tenant}: a shared-id stored by the other tenant is no duplicate here`,
        );
      }
    });

    test('_search, _msearch, _mapping and _field_caps show each tenant its own data only, whatever the credential', async () => {
      for (const [tenant, own] of [
        ['a', a],
        ['b', b],
      ] as const) {
        const expected = ownView(tenant);
        for (const { name, headers } of own.credentials) {
          const seen = await view(headers);
          const what = `tenant ${tenant} with ${name}`;
          assert.deepEqual(seen.messages, expected.messages, what);
          assert.ok(seen.ids.includes('shared-id'), what);
          assert.deepEqual(seen.indices, expected.indices, what);
          assert.deepEqual(seen.msearchMessages, expected.messages, what);
          assert.equal(seen.msearchTotal, expected.msearchTotal, what);
          assert.deepEqual(seen.mappedFields, expected.fields, what);
          assert.deepEqual(seen.capsFields, expected.fields, what);
        }
      }
      // Naming the other tenant's index finds nothing either.
      const other = await elastic('POST', '/app-b/_search', a.credentials[1]!.headers, JSON.stringify({ track_total_hits: true }));
      assert.deepEqual(other.json().hits.total, { value: 0, relation: 'eq' });
      const otherMapping = await elastic('GET', '/app-b/_mapping', a.credentials[2]!.headers);
      assert.ok(!('only_b' in otherMapping.json()['app-b'].mappings.properties));
    });

    test('X-Tenant-Id naming another tenant is refused (403, nothing written) for users without tenants:manage and for every API key', async () => {
      const before = await view(b.credentials[1]!.headers);
      const refusedRequests = [
        ['POST', '/_bulk', ndjson([{ index: {} }, { message: 'smuggled into b' }])],
        ['PUT', '/app-b/_bulk', ndjson([{ create: {} }, { message: 'smuggled into b' }])],
        ['POST', '/_search', '{}'],
        ['GET', '/app-b/_search', undefined],
        ['POST', '/_msearch', ndjson([{}, { size: 1 }])],
        ['GET', '/_mapping', undefined],
        ['GET', '/app-b/_mapping', undefined],
        ['GET', '/_field_caps?fields=*', undefined],
        ['POST', '/app-b/_field_caps', '{"fields":["*"]}'],
      ] as const;
      for (const { name, headers } of a.credentials) {
        for (const [method, path, payload] of refusedRequests) {
          const response = await elastic(method, path, { ...headers, 'x-tenant-id': b.id }, payload);
          assert.equal(response.statusCode, 403, `${name}: ${method} ${path}`);
          assert.equal(response.json().error.type, 'security_exception');
          assert.equal(response.headers['x-elastic-product'], 'Elasticsearch');
        }
        // Naming its own tenant is the same as naming none.
        const own = await elastic('POST', '/_search', { ...headers, 'x-tenant-id': a.id }, '{"track_total_hits":true}');
        assert.equal(own.statusCode, 200, `${name}: own tenant`);
        assert.equal(own.json().hits.total.value, 2);
      }
      assert.deepEqual(await view(b.credentials[1]!.headers), before, 'nothing was written into tenant b');
    });

    test('a user with tenants:manage reads and writes the tenant X-Tenant-Id names; an unknown tenant is 404; an API key stays in its tenant', async () => {
      const admin = await logs.admin();
      // Without the header the administrator is in its own tenant, which holds neither tenant's data.
      const home = await view(admin);
      assert.deepEqual([home.messages, home.mappedFields, home.capsFields], [[], [], []]);

      const inB = { ...admin, 'x-tenant-id': b.id };
      assert.deepEqual((await view(inB)).messages, ownView('b').messages);
      const written = await elastic(
        'POST',
        '/_bulk',
        inB,
        ndjson([{ index: { _index: 'app-b' } }, { message: 'written for b by the admin' }]),
      );
      assert.equal(written.json().errors, false);
      assert.ok((await view(b.credentials[2]!.headers)).messages.includes('written for b by the admin'), "in tenant b's own view");
      assert.ok(!(await view(a.credentials[2]!.headers)).messages.includes('written for b by the admin'));

      const unknown = await elastic('POST', '/_search', { ...admin, 'x-tenant-id': 'no-such-tenant' }, '{}');
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().error.type, 'resource_not_found_exception');

      // The administrator's key made while acting in tenant b is b's key: it reads b, and no
      // X-Tenant-Id takes it elsewhere, although it holds tenants:manage and its owner may act in every tenant.
      const created = await logs.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: inB,
        payload: { name: uniqueName('admin-key'), permissions: ['logs:read', 'logs:write', 'tenants:manage'] },
      });
      assert.equal(created.statusCode, 201, created.body);
      const key = { authorization: `ApiKey ${created.json().encoded as string}` };
      assert.ok((await view(key)).messages.includes('written for b by the admin'));
      for (const elsewhere of [a.id, 'default']) {
        for (const [method, path, payload] of [
          ['POST', '/_search', '{}'],
          ['POST', '/_bulk', ndjson([{ index: {} }, { message: 'key moved tenants' }])],
        ] as const) {
          const response = await elastic(method, path, { ...key, 'x-tenant-id': elsewhere }, payload);
          assert.equal(response.statusCode, 403, `${method} ${path} in ${elsewhere}`);
        }
      }
      assert.ok(!(await view(a.credentials[0]!.headers)).messages.includes('key moved tenants'));
    });
  });
}
