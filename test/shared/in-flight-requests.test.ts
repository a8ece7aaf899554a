import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { InFlightRequests } from '../../src/shared/http/drain.js';

/**
 * The tracker of requests in flight that a drain reads (docs/operations.md, "Stopping"): requests
 * answered in any order leave it, and what is cut at the end is exactly what is still running.
 */
test('requests answered in any order leave the tracker; the cut lists exactly those still running', async () => {
  const inFlight = new InFlightRequests();
  const held = new Map<string, ServerResponse>();
  const server = createServer((req, res) => {
    if (req.url!.startsWith('/hold/')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      held.set(req.url!, res);
      server.emit('held');
    } else res.end('ok');
  });
  inFlight.watch(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const get = (path: string) =>
    new Promise<void>((resolve) => {
      const req = request({ port, host: '127.0.0.1', path, agent: false }, (res) => {
        res.resume();
        res.on('close', resolve);
      });
      req.on('error', () => resolve());
      req.end();
    });

  try {
    const answered = Array.from({ length: 20 }, (_, i) => get(`/quick/${i}`));
    const holding = ['/hold/a?secret=1', '/hold/b', '/hold/c', '/hold/d'].map((path) => get(path));
    while (held.size < 4) await once(server, 'held');
    await Promise.all(answered);
    assert.equal(inFlight.size, 4);

    // Out of order: the second and the first, then the last.
    for (const path of ['/hold/b', '/hold/a?secret=1', '/hold/d']) {
      const res = held.get(path)!;
      res.end();
      await once(res, 'close');
    }
    assert.equal(inFlight.size, 1);

    const cut = inFlight.cutAll();
    assert.deepEqual(
      cut.map(({ method, path }) => ({ method, path })),
      [{ method: 'GET', path: '/hold/c' }],
    );
    assert.ok(cut[0]!.bytesSent > 0);
    await Promise.all(holding);
    assert.equal(inFlight.size, 0);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
