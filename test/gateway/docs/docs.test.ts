import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { closedPort, startUpstream, type TestUpstream } from '../../helpers/upstream.js';

const SWAGGER_2 = {
  swagger: '2.0',
  info: { title: 'Master Data', version: '1' },
  basePath: '/md',
  paths: {
    '/provinsi': {
      get: {
        operationId: 'listProvinsi',
        summary: 'Daftar provinsi',
        parameters: [{ name: 'q', in: 'query', type: 'string' }],
        responses: { 200: { description: 'ok', schema: { type: 'array', items: { $ref: '#/definitions/Item' } } } },
      },
    },
  },
  definitions: { Item: { type: 'object', properties: { kode: { type: 'string' }, nama: { type: 'string' } } } },
  securityDefinitions: { upstreamKey: { type: 'apiKey', in: 'header', name: 'X-Key' } },
};

const OPENAPI_3 = {
  openapi: '3.0.3',
  info: { title: 'Kepegawaian', version: '1' },
  paths: {
    '/pegawai/{id}': {
      get: {
        operationId: 'getPegawai',
        tags: ['pegawai'],
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } },
      },
    },
  },
  components: { schemas: { Item: { type: 'object', properties: { nip: { type: 'string' } }, required: ['nip'] } } },
};

/** Every local $ref of the document resolves. */
function danglingRefs(document: Record<string, unknown>): string[] {
  const missing: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) {
        let target: unknown = document;
        for (const part of value.slice(2).split('/'))
          target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
        if (target === undefined) missing.push(value);
      } else walk(value);
    }
  };
  walk(document);
  return missing;
}

describe('merged API documentation and Swagger UI', () => {
  let gw: TestGateway;
  let swagger2: TestUpstream;
  let openapi3: TestUpstream;
  let noDocs: TestUpstream;

  before(async () => {
    swagger2 = await startUpstream((req, res) => {
      if (req.url === '/md/docs.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SWAGGER_2));
      else res.writeHead(404).end();
    });
    openapi3 = await startUpstream((req, res) => {
      if (req.url === '/openapi.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(OPENAPI_3));
      else res.writeHead(404).end();
    });
    noDocs = await startUpstream((_req, res) => void res.writeHead(404).end());
    gw = await startTestGateway('sqlite', {
      SERVER_SERVICE_MASTER_DATA: `${swagger2.url}/md`,
      SERVER_SERVICE_KEPEGAWAIAN: openapi3.url,
      SERVER_SERVICE_KEPEGAWAIAN_DOCS_PATH: '/openapi.json',
      SERVER_SERVICE_KEUANGAN: `http://127.0.0.1:${await closedPort()}`,
      SERVER_SERVICE_PELAPORAN: noDocs.url,
      GATEWAY_DOCS_REFRESH: '60s',
    });
  });
  after(async () => {
    await gw.close();
    await Promise.all([swagger2.close(), openapi3.close(), noDocs.close()]);
  });

  const docs = async () => {
    const response = await gw.request({ method: 'GET', url: '/api/v1/docs.json' });
    assert.equal(response.statusCode, 200);
    return response.json();
  };

  test("one OpenAPI 3 document: the gateway's own operations and each service's under its base path", async () => {
    const document = await docs();
    assert.match(document.openapi, /^3\./);
    assert.ok(document.paths['/api/v1/auth/login'], 'own login operation');
    assert.ok(document.paths['/api/v1/pengguna'], 'own user operations');
    // Swagger 2.0, converted; the upstream's basePath equals its address prefix, so it is not repeated
    const provinsi = document.paths['/api/v1/master-data/provinsi'].get;
    assert.equal(provinsi.summary, 'Daftar provinsi');
    assert.equal(provinsi.operationId, 'MasterData_listProvinsi');
    assert.deepEqual(provinsi.security, [{ gatewayToken: [] }, { ssoCookie: [] }]);
    const [content] = Object.values(provinsi.responses['200'].content) as { schema: { items: { $ref: string } } }[];
    assert.equal(content!.schema.items.$ref, '#/components/schemas/MasterData_Item');
    // OpenAPI 3
    const pegawai = document.paths['/api/v1/kepegawaian/pegawai/{id}'].get;
    assert.equal(pegawai.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Kepegawaian_Item');
    // Same schema name in two services: both kept, apart
    assert.deepEqual(Object.keys(document.components.schemas.MasterData_Item.properties), ['kode', 'nama']);
    assert.deepEqual(document.components.schemas.Kepegawaian_Item.required, ['nip']);
    assert.equal(document.components.schemas.Item, undefined);
    // The services' own auth schemes are not the client's business; the gateway token is
    assert.equal(document.components.securitySchemes.MasterData_upstreamKey, undefined);
    assert.deepEqual(document.components.securitySchemes.gatewayToken, {
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
      description: document.components.securitySchemes.gatewayToken.description,
    });
    assert.equal(document.components.securitySchemes.ssoCookie.in, 'cookie');
    assert.equal(document.components.securitySchemes.ssoCookie.name, 'access_token');
    assert.deepEqual(
      document.paths['/api/v1/pengguna'].get.security,
      [{ gatewayToken: [] }, { ssoCookie: [] }],
      'own routes accept either too',
    );
    assert.deepEqual(danglingRefs(document), []);
  });

  test('a down, undescribed or unconfigured service is listed from the spec 4.4 table and named as unavailable', async () => {
    const document = await docs();
    assert.deepEqual(
      document['x-unavailable-services'].map((entry: { service: string; reason: string }) => `${entry.service}:${entry.reason}`),
      [
        'keuangan:unreachable',
        'perizinan:not configured',
        'pelaporan:no description',
        'tramtibum:not configured',
        'file:not configured',
        'notification:not configured',
      ],
    );
    const slip = document.paths['/api/v1/keuangan/slip-gaji'].get;
    assert.equal(slip.summary, 'pay slip');
    assert.deepEqual(
      slip.parameters.map((p: { name: string; schema: { type: string } }) => `${p.name}:${p.schema.type}`),
      ['bulan:integer', 'tahun:integer'],
    );
    assert.ok(document.paths['/api/v1/pelaporan/laporan/{id}'].get);
    const upload = document.paths['/api/v1/file/upload'].post;
    assert.deepEqual(upload.requestBody.content['multipart/form-data'].schema.properties.file, { type: 'string', format: 'binary' });
    assert.ok(document.paths['/api/v1/notification/{id}/read'].put);
  });

  test('descriptions are cached for the refresh interval, then fetched again', async () => {
    await docs();
    const fetched = swagger2.seen.length;
    await docs();
    assert.equal(swagger2.seen.length, fetched, 'served from the cache');
    gw.clock.advance(61_000);
    await docs();
    assert.equal(swagger2.seen.length, fetched + 1, 'fetched again after the interval');
  });

  test('Swagger UI loads from the gateway alone: page, scripts and styles, on the merged document', async () => {
    const page = await gw.request({ method: 'GET', url: '/api/v1/swagger/index.html' });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.doesNotMatch(page.body, /https?:\/\//, 'no outside address (CDN)');
    const csp = page.headers['content-security-policy'] as string;
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /default-src 'none'/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(assets.some((asset) => asset.endsWith('swagger-ui-bundle.js')));
    for (const asset of assets) {
      const response = await gw.request({ method: 'GET', url: asset });
      assert.equal(response.statusCode, 200, asset);
      if (asset.endsWith('.js')) assert.match(response.headers['content-type'] as string, /javascript/, asset);
      if (asset.endsWith('.css')) assert.match(response.headers['content-type'] as string, /css/, asset);
    }
    const bundle = await gw.request({ method: 'GET', url: assets.find((asset) => asset.endsWith('swagger-ui-bundle.js'))! });
    assert.ok(bundle.body.length > 500_000, 'the real Swagger UI bundle');
    const init = await gw.request({ method: 'GET', url: assets.find((asset) => asset.endsWith('gerbang-init.js'))! });
    assert.match(init.body, /url: '\/api\/v1\/docs\.json'/);
    assert.match(init.body, /validatorUrl: null/);
  });
});
