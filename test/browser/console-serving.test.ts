// The console's serving (docs/console.md): built by scripts/build-console.mjs, index never cached,
// hashed assets cached for a year, a strict CSP with no inline script, `/` redirecting to it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
// @ts-expect-error a plain ES module script without types
import { buildConsole } from '../../scripts/build-console.mjs';
import { startTestLogs, type TestLogs } from '../helpers/logs.js';

describe('web console serving', () => {
  let logs: TestLogs;
  const directory = mkdtempSync(join(tmpdir(), 'gerbang-console-'));
  before(async () => {
    await buildConsole(directory);
    process.env.LOGS_CONSOLE_DIR = directory;
    logs = await startTestLogs('sqlite');
  });
  after(async () => {
    delete process.env.LOGS_CONSOLE_DIR;
    await logs?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  test('/ redirects to /console/, whose index is not cached and has a strict CSP', async () => {
    const root = await logs.request({ method: 'GET', url: '/' });
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, '/console/');
    const index = await logs.request({ method: 'GET', url: '/console/' });
    assert.equal(index.statusCode, 200);
    assert.equal(index.headers['cache-control'], 'no-cache');
    const csp = String(index.headers['content-security-policy']);
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.doesNotMatch(index.body, /<script>(?!<\/script>)/);
  });

  test('hashed assets are served with a year of caching, small enough gzipped', async () => {
    const index = await logs.request({ method: 'GET', url: '/console/' });
    const assets = [...index.body.matchAll(/\/console\/assets\/([\w-]+\.(?:js|css))/g)].map((m) => m[1]!);
    assert.equal(assets.length, 2);
    let gzipped = 0;
    for (const asset of assets) {
      const response = await logs.request({ method: 'GET', url: `/console/assets/${asset}` });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable');
      gzipped += gzipSync(readFileSync(join(directory, 'assets', asset))).length;
    }
    assert.ok(gzipped < 150 * 1024, `first load ${gzipped} bytes gzipped`);
    const missing = await logs.request({ method: 'GET', url: '/console/assets/..%2Fpackage.json' });
    assert.equal(missing.statusCode, 404);
  });

  test('hashed assets travel brotli- or gzip-compressed when the browser asks, as they are otherwise', async () => {
    const index = await logs.request({ method: 'GET', url: '/console/' });
    const js = /\/console\/assets\/(app-[\w-]+\.js)/.exec(index.body)![1]!;
    const original = readFileSync(join(directory, 'assets', js));
    const get = (acceptEncoding?: string) =>
      logs.request({ method: 'GET', url: `/console/assets/${js}`, headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} });
    const br = await get('gzip, deflate, br, zstd');
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'accept-encoding');
    assert.ok(br.rawPayload.length < original.length / 2, `${br.rawPayload.length} of ${original.length} bytes`);
    assert.deepEqual(brotliDecompressSync(br.rawPayload), original);
    const gz = await get('gzip;q=1, br;q=0');
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.rawPayload), original);
    const plain = await get();
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(plain.rawPayload, original);
    // The first load as a browser fetches it: under the 150 KB budget, compressed.
    let firstLoad = br.rawPayload.length;
    const css = /\/console\/assets\/(style-[\w-]+\.css)/.exec(index.body)![1]!;
    firstLoad += (await logs.request({ method: 'GET', url: `/console/assets/${css}`, headers: { 'accept-encoding': 'br' } })).rawPayload
      .length;
    assert.ok(firstLoad < 150 * 1024, `${firstLoad} bytes`);
  });

  test('JSON answers are compressed when the client asks and large enough to gain from it', async () => {
    const headers = await logs.admin();
    const docs = Array.from(
      { length: 200 },
      (_, i) =>
        `{"index":{}}\n${JSON.stringify({ '@timestamp': new Date().toISOString(), message: `compressible entry ${i}`, level: 'info' })}`,
    );
    await logs.request({ method: 'POST', url: '/api/v1/_elastic/_bulk', headers, payload: `${docs.join('\n')}\n` });
    const search = (acceptEncoding?: string) =>
      logs.request({
        method: 'POST',
        url: '/api/v1/logs/list/paginate',
        headers: { ...headers, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
        payload: {
          query: 'compressible',
          limit: 200,
          timeRange: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() },
        },
      });
    const plain = await search();
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.json().data.length, 200);
    const br = await search('br');
    assert.equal(br.headers['content-encoding'], 'br');
    assert.ok(br.rawPayload.length < plain.rawPayload.length / 4, `${br.rawPayload.length} of ${plain.rawPayload.length} bytes`);
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.rawPayload).toString()), plain.json());
    const gz = await search('gzip');
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(gunzipSync(gz.rawPayload).toString()), plain.json());
    const small = await logs.request({ method: 'GET', url: '/api/me', headers: { ...headers, 'accept-encoding': 'br' } });
    assert.equal(small.headers['content-encoding'], undefined, 'a small answer goes as it is');
  });

  test('a favicon: linked from the page and at /favicon.ico, where browsers look by themselves', async () => {
    const index = await logs.request({ method: 'GET', url: '/console/' });
    assert.match(index.body, /<link rel="icon" href="\/console\/assets\/favicon.svg" type="image\/svg\+xml">/);
    const icon = await logs.request({ method: 'GET', url: '/favicon.ico' });
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['content-type'], 'image/svg+xml');
    assert.match(icon.body, /^<svg /);
    assert.equal((await logs.request({ method: 'GET', url: '/console/assets/favicon.svg' })).statusCode, 200);
  });
});
