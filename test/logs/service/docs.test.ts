import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';

/** The logs service's OpenAPI document and its Swagger UI, served offline (docs/logs-api.md). */
describe('logs API documentation', () => {
  let logs: TestLogs;
  before(async () => {
    logs = await startTestLogs('sqlite');
  });
  after(async () => logs.close());

  test('every route but login (its steps) and refresh states the permission it needs', async () => {
    const doc = (await logs.request({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: unknown[]; 'x-permissions'?: string[]; description?: string }>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ id: `${method} ${path}`, op })),
    );
    assert.ok(operations.length > 60, `${operations.length} operations`);
    const open = operations.filter(({ op }) => op['x-permissions'] === undefined).map(({ id }) => id);
    assert.deepEqual(open.sort(), [
      'post /api/login',
      'post /api/login/mfa',
      'post /api/login/passkey',
      'post /api/login/passkey/options',
      'post /api/refresh',
    ]);
    for (const { id, op } of operations.filter(({ op }) => op['x-permissions'] !== undefined)) {
      assert.ok(op.security && op.security.length > 0, `${id} is guarded, so it names its credentials`);
      assert.match(op.description ?? '', /Needs: /, id);
    }
    const search = doc.paths['/api/v1/logs/list/paginate']!.post!;
    assert.deepEqual(search['x-permissions'], ['logs:read']);
    assert.deepEqual(doc.paths['/api/v1/_elastic/_bulk']!.post!['x-permissions'], ['logs:write']);
    assert.deepEqual(doc.paths['/api/v1/api-keys']!.post!['x-permissions'], []);
  });

  test('Swagger UI with its assets from the service itself, under a strict content security policy', async () => {
    const page = await logs.request({ method: 'GET', url: '/api/v1/swagger/index.html' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /^default-src 'self'; script-src 'self'/);
    assert.ok(!/https?:\/\//.test(page.body), 'nothing is loaded from elsewhere');
    const init = await logs.request({ method: 'GET', url: '/api/v1/swagger/gerbang-init.js' });
    assert.match(init.body, /url: '\/openapi\.json'/);
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const response = await logs.request({ method: 'GET', url: `/api/v1/swagger/static/${asset}` });
      assert.equal(response.statusCode, 200, asset);
    }
  });
});
