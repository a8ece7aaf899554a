#!/usr/bin/env node
// The per-request work of single proxy components, before and after a change: each component's
// call as the proxy makes it, timed in a loop in this process, two builds side by side (their dist
// directories), rounds alternating. CPU time (process.cpuUsage), cheapest round of each: what the
// code costs when it runs, which a loaded machine inflates least. Not the whole request: the
// socket work, GC and Node's HTTP server are measured by bench/proxy-cpu.mjs.
//   node bench/proxy-components-micro.mjs <before dist> <after dist>
// Components: the token check (caches warm, as for a client sending its token again), the access
// line (written to a sink that drops it), the metrics, the request header rules, the breaker.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fmt } from './lib.mjs';

const [beforeDir, afterDir] = process.argv.slice(2).map((dir) => resolve(dir));
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const load = (dist, path) => import(pathToFileURL(resolve(dist, path)).href);
const sink = { write() {} };
const HEADERS = {
  host: '127.0.0.1:9103',
  'user-agent': 'wrk',
  accept: '*/*',
  'content-type': 'application/json',
  'content-length': '1024',
  authorization: `abc${'eyJhbGciOiJFUzI1NiJ9.'}${'x'.repeat(400)}.${'y'.repeat(86)}12345`,
  connection: 'keep-alive',
};
const FIELDS = {
  reqId: '4f1c9a2e-8b7d-4e7a-9a3b-2f6c1d0e9b8a',
  service: 'master-data',
  method: 'GET',
  path: '/api/v1/master-data/1k',
  query: undefined,
  status: 200,
  upstreamMs: 1.3,
  totalMs: 2.1,
  failure: undefined,
};

/** Each component of a build: a function doing one request's worth, possibly async. */
async function componentsOf(dist) {
  const { upstreamRequestHeaders } = await load(dist, 'gateway/modules/proxy/headers.js');
  const { ProxyMetrics } = await load(dist, 'gateway/modules/proxy/proxy.metrics.js');
  const { CircuitBreaker } = await load(dist, 'gateway/modules/proxy/circuit-breaker.js');
  const { GatewayTokens } = await load(dist, 'gateway/modules/auth/tokens.js');
  const { CachingSessionsRepository } = await load(dist, 'gateway/modules/auth/session-cache.js');
  const { authGuards, authorizationHeaderSource } = await load(dist, 'gateway/modules/auth/authenticate.js');
  const accessLineModule = await load(dist, 'gateway/modules/proxy/access-line.js').catch(() => undefined);
  const { plainLogger } = await load(dist, 'shared/http/logger.js');

  // The token check with both caches warm: a verified token and its cached live session.
  const jwt = HEADERS.authorization.slice(3, -5);
  const sessions = new CachingSessionsRepository({ db: undefined, ttlMs: 2_000, now: Date.now, announcers: [] });
  const session = { id: 's1', user_id: 'u1', revoked_at: null, expires_at: '2999-01-01T00:00:00.000Z' };
  sessions.cache.set('s1', { session, readAt: Date.now(), until: Number.MAX_SAFE_INTEGER });
  const tokens = new GatewayTokens({ keys: {}, config: { issuer: 'i', audience: 'a', ttlMs: 3_600_000 }, sessions, now: Date.now });
  tokens.verifier.verified.set(jwt, { sub: 'u1', user_id: 'u1', sid: 's1', exp: 4_102_444_800 });
  const guards = authGuards(tokens, undefined, [authorizationHeaderSource]);
  const request = { method: 'GET', headers: HEADERS, cookies: {}, protocol: 'http', host: '127.0.0.1' };
  const tokenCheck = guards.authenticateCached
    ? async () => guards.authenticateCached(request) ?? (await guards.authenticate(request))
    : async () => await guards.authenticate(request);

  const logger = plainLogger('info', sink);
  const line = accessLineModule?.accessLine('info', sink);
  const accessLine = line ? () => line({ ...FIELDS }) : () => logger.info({ ...FIELDS }, 'proxied');

  const metrics = new ProxyMetrics();
  const bound = metrics.forService?.('master-data');
  const observe = bound
    ? () => bound.observe('GET', 200, 0.0021, 0.0013)
    : () => metrics.observe('master-data', 'GET', 200, 0.0021, 0.0013);

  const facts = {
    authorization: HEADERS.authorization,
    requestId: FIELDS.reqId,
    userId: 'u1',
    forwardedFor: '127.0.0.1',
    forwardedProto: 'http',
    forwardedHost: '127.0.0.1:9103',
    trustForwarding: false,
    trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  };
  const headerRules = () => upstreamRequestHeaders(HEADERS, facts);

  const breaker = new CircuitBreaker(5, 30_000, Date.now);
  const breakerCall = () => {
    const call = breaker.enter();
    call.succeeded();
    call.released();
  };
  return new Map([
    ['token check (caches warm)', tokenCheck],
    ['access line', accessLine],
    ['metrics', observe],
    ['request header rules', headerRules],
    ['circuit breaker', breakerCall],
  ]);
}

async function time(fn) {
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i += 1) {
    const result = fn();
    if (result instanceof Promise) await result;
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / ITERATIONS; // ns a call
}

async function main() {
  const builds = [
    ['before', await componentsOf(beforeDir)],
    ['after', await componentsOf(afterDir)],
  ];
  const best = new Map();
  for (const [name] of builds[0][1]) for (const [build] of builds) best.set(`${name}|${build}`, Infinity);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [build, components] of round % 2 === 0 ? builds : [...builds].reverse()) {
      for (const [name, fn] of components) {
        const ns = await time(fn);
        const key = `${name}|${build}`;
        best.set(key, Math.min(best.get(key), ns));
      }
    }
  }
  process.stdout.write(`| component | before ns/request | after ns/request |\n|---|---|---|\n`);
  for (const [name] of builds[0][1]) {
    process.stdout.write(`| ${name} | ${fmt(best.get(`${name}|before`), 0)} | ${fmt(best.get(`${name}|after`), 0)} |\n`);
  }
}

await main();
