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

/** A small seeded generator: the same order on every run, and another one for each seed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0;
  for (let i = out.length - 1; i > 0; i -= 1) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

test('many requests ended in a random order, by the server or by clients leaving: the tracker holds exactly those left', async () => {
  const inFlight = new InFlightRequests();
  const held = new Map<string, ServerResponse>();
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial');
    held.set(req.url!, res);
    server.emit('held');
  });
  inFlight.watch(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const COUNT = 120;
  const paths = Array.from({ length: COUNT }, (_, i) => `/r/${i}`);
  const clients = new Map<string, ReturnType<typeof request>>();
  const settled = paths.map(
    (path) =>
      new Promise<void>((resolve) => {
        const req = request({ port, host: '127.0.0.1', path, agent: false }, (res) => {
          res.resume();
          res.on('close', resolve);
        });
        req.on('error', () => resolve());
        req.end();
        clients.set(path, req);
      }),
  );

  try {
    while (held.size < COUNT) await once(server, 'held');
    assert.equal(inFlight.size, COUNT);
    const order = shuffled(paths, 43);
    const left = new Set(paths);
    // All but ten ended, a fifth of them by their client hanging up, in batches closing together.
    for (let start = 0; start < COUNT - 10; start += 11) {
      const batch = order.slice(start, Math.min(start + 11, COUNT - 10));
      const closed = batch.map((path, i) => {
        const res = held.get(path)!;
        if (i % 5 === 0) clients.get(path)!.destroy();
        else res.end();
        left.delete(path);
        return once(res, 'close');
      });
      await Promise.all(closed);
      assert.equal(inFlight.size, left.size);
    }

    const cut = inFlight.cutAll();
    const cutClosed = [...left].map((path) => once(held.get(path)!, 'close'));
    assert.deepEqual(cut.map(({ path }) => path).sort(), [...left].sort());
    await Promise.all([...settled, ...cutClosed]);
    assert.equal(inFlight.size, 0);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
