// The console's serving (docs/console.md): built by scripts/build-console.mjs, index never cached,
// hashed assets cached for a year, a strict CSP with no inline script, `/` redirecting to it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
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
    assert.ok(gzipped < 200 * 1024, `first load ${gzipped} bytes gzipped`);
    const missing = await logs.request({ method: 'GET', url: '/console/assets/..%2Fpackage.json' });
    assert.equal(missing.statusCode, 404);
  });
});
