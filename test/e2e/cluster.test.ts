import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { runCli, startCli, type CliProcess } from '../helpers/cli-process.js';
import { LISTENER_RESTORED } from '../../src/gateway/modules/auth/session-notify.js';
import { eventually } from '../helpers/eventually.js';
import { ADMIN_PASSWORD } from '../helpers/gateway.js';
import { LOGS_ADMIN, LOGS_ADMIN_PASSWORD } from '../helpers/logs.js';
import { startNginx, type TestNginx } from '../helpers/nginx.js';
import { startPostgresCluster, type PostgresCluster } from '../helpers/postgres-cluster.js';
import { closedPort, startUpstream, type TestUpstream } from '../helpers/upstream.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Two of everything on PostgreSQL (docs/scaling.md, "The cluster test"): a primary and a streaming
 * standby (Debian's PostgreSQL), two gateway and two logs instances as real processes, and Debian's
 * nginx in front running deploy/compose/nginx.conf (round robin, nothing sticky). Clients speak to
 * nginx only, and retry what failed as a shipper or a browser would; the test reads each
 * instance's own log lines to know who answered. Loopback only; nothing here waits on a sleep (the
 * clients' back-off between retries is the clients' own).
 */

const SHIPPER_KEY = 'cluster-test-shipper-key-0123456789abcdef';
const WEBHOOK_SECRET = 'cluster-webhook-secret-0123456789';
const SESSION_CACHE = '30s';
/** What a retry fixes: nginx's 502 for a request whose instance died under it, a 503/504 of a busy or restarting service, a cut connection. */
const RETRYABLE = new Set(['502', '503', '504', 'network']);

type Kind = 'gateway' | 'logs';

interface Instance {
  kind: Kind;
  port: number;
  cli: CliProcess;
}

interface Failure {
  what: string;
  status: string;
  detail: string;
  at: number;
}

/** Successes and failures of the clients, with when each request started and ended. */
class Traffic extends EventEmitter {
  readonly failures: Failure[] = [];
  readonly successes: { what: string; startedAt: number; doneAt: number }[] = [];

  /**
   * Sends until `ok` accepts the answer, as a shipper does: every failure is recorded, then retried
   * after a short back-off (at most 40 attempts).
   */
  async untilOk(what: string, send: () => Promise<Response>, ok: (status: number, body: string) => boolean = (s) => s === 200) {
    for (let attempt = 1; ; attempt += 1) {
      const startedAt = performance.now();
      let status: string;
      let detail: string;
      try {
        const response = await send();
        const body = await response.text();
        if (ok(response.status, body)) {
          this.successes.push({ what, startedAt, doneAt: performance.now() });
          this.emit('success', what);
          return body;
        }
        status = String(response.status);
        detail = body.slice(0, 300);
      } catch (error) {
        status = 'network';
        detail = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
      }
      this.failures.push({ what, status, detail, at: performance.now() });
      if (attempt >= 40) throw new Error(`${what}: still failing after ${attempt} attempts: ${JSON.stringify(this.failures.slice(-3))}`);
      await delay(Math.min(25 * 2 ** attempt, 500));
    }
  }

  /** From `since` until a request of `what` that started after the last failure since then succeeded, in ms. */
  recoveredAfter(what: string, since: number): number {
    const lastFailure = this.failures.filter((f) => f.what === what && f.at >= since).at(-1)?.at ?? since;
    const first = this.successes.find((s) => s.what === what && s.startedAt >= lastFailure);
    assert.ok(first, `${what} succeeded again after ${since}`);
    return first.doneAt - since;
  }
}

describe('two of everything on PostgreSQL behind nginx', () => {
  let cluster: PostgresCluster;
  let masterData: TestUpstream;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let nginx: TestNginx;
  const gateways: Instance[] = [];
  const logs: Instance[] = [];
  let gatewayUrl = '';
  let logsUrl = '';
  const traffic = new Traffic();
  /** Measurements, printed at the end for docs/reliability.md. */
  const measured = new Map<string, string>();

  async function start(kind: Kind, port: number): Promise<Instance> {
    const env: Record<string, string> =
      kind === 'gateway'
        ? {
            GATEWAY_PORT: String(port),
            GATEWAY_DATABASE_URL: cluster.primaryUrl('gerbang_gateway'),
            GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
            GATEWAY_SESSION_CACHE_TTL: SESSION_CACHE,
            GATEWAY_TRUST_PROXY: '1',
            SERVER_SERVICE_MASTER_DATA: masterData.url,
            GATEWAY_TELEMETRY_URL: logsUrl,
            GATEWAY_TELEMETRY_KEY: SHIPPER_KEY,
          }
        : {
            LOGS_PORT: String(port),
            LOGS_DATABASE_URL: cluster.primaryUrl('gerbang_logs'),
            // The log store's reads go to the standby (docs/scaling.md, "Read replicas").
            LOGS_DATABASE_READ_URL: cluster.standbyUrl('gerbang_logs'),
            LOGS_ADMIN_PASSWORD,
            LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
            LOGS_GATEWAY_SHIPPER_KEY: SHIPPER_KEY,
            LOGS_TRUST_PROXY: '1',
            LOGS_ALERTS_EVAL_INTERVAL: '250ms',
            LOGS_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
            LOGS_WEBHOOK_BACKOFF: '100ms',
          };
    const cli = startCli([kind], env);
    await cli.waitFor((line) => line.msg.startsWith('Server listening'));
    return { kind, port, cli };
  }

  async function kill(instance: Instance): Promise<void> {
    instance.cli.child.kill('SIGKILL');
    await instance.cli.exited;
  }

  /** Starts a killed instance again, on its port. */
  async function restart(instances: Instance[], index: number): Promise<void> {
    instances[index] = await start(instances[index]!.kind, instances[index]!.port);
  }

  before(async () => {
    cluster = await startPostgresCluster();
    await cluster.createDatabase('gerbang_gateway');
    await cluster.createDatabase('gerbang_logs');
    masterData = await startUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
    });
    receiver = await startWebhookReceiver();
    const [gatewayLb, logsLb] = [await closedPort(), await closedPort()];
    gatewayUrl = `http://127.0.0.1:${gatewayLb}`;
    logsUrl = `http://127.0.0.1:${logsLb}`;
    // All four at once, as replicas start: migrations take an advisory lock in turn.
    const ports = await Promise.all([closedPort(), closedPort(), closedPort(), closedPort()]);
    gateways.push(...(await Promise.all([start('gateway', ports[0]!), start('gateway', ports[1]!)])));
    logs.push(...(await Promise.all([start('logs', ports[2]!), start('logs', ports[3]!)])));
    nginx = await startNginx(
      'deploy/compose/nginx.conf',
      new Map([
        ['gateway-1:8080', `127.0.0.1:${gateways[0]!.port}`],
        ['gateway-2:8080', `127.0.0.1:${gateways[1]!.port}`],
        ['logs-1:8081', `127.0.0.1:${logs[0]!.port}`],
        ['logs-2:8081', `127.0.0.1:${logs[1]!.port}`],
      ]),
      new Map([
        [8080, gatewayLb],
        [8081, logsLb],
      ]),
    );
  });

  after(async () => {
    for (const instance of [...gateways, ...logs]) await kill(instance);
    await nginx?.stop();
    await receiver?.close();
    await masterData?.close();
    await cluster?.remove();
    for (const [name, value] of measured) console.log(`# measured: ${name}: ${value}`);
  });

  const json = (body: string) => JSON.parse(body) as any;
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  async function gatewayLogin(): Promise<string> {
    const body = await traffic.untilOk('gateway login', () =>
      post(`${gatewayUrl}/api/v1/auth/login`, { no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
    );
    return json(body).data.token as string;
  }

  let logsAuth: Record<string, string> | undefined;
  /** The logs administrator's bearer token (through nginx). */
  async function logsAdmin(): Promise<Record<string, string>> {
    if (logsAuth) return logsAuth;
    const body = await traffic.untilOk('logs login', () =>
      post(`${logsUrl}/api/login`, { username: LOGS_ADMIN, password: LOGS_ADMIN_PASSWORD }),
    );
    logsAuth = { authorization: `Bearer ${json(body).token.access_token}` };
    return logsAuth;
  }

  let shipperAuth: Record<string, string> | undefined;
  /** An API key for ingestion and search, as a shipper holds. */
  async function shipper(): Promise<Record<string, string>> {
    if (shipperAuth) return shipperAuth;
    const body = await traffic.untilOk(
      'api key',
      async () =>
        post(`${logsUrl}/api/v1/api-keys`, { name: 'cluster shipper', permissions: ['logs:read', 'logs:write'] }, await logsAdmin()),
      (status) => status === 201,
    );
    shipperAuth = { authorization: `ApiKey ${json(body).encoded}` };
    return shipperAuth;
  }

  /** One `_bulk` of documents with `_id`s, retried until every item is stored (a retry of a stored id answers `noop`). */
  async function ship(what: string, index: string, docs: { _id: string; [field: string]: unknown }[]): Promise<void> {
    const body = docs.map(({ _id, ...doc }) => `${JSON.stringify({ index: { _index: index, _id } })}\n${JSON.stringify(doc)}\n`).join('');
    const auth = await shipper();
    await traffic.untilOk(
      what,
      () =>
        fetch(`${logsUrl}/api/v1/_elastic/_bulk`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/x-ndjson' },
          body,
        }),
      (status, text) => status === 200 && json(text).errors === false,
    );
  }

  /**
   * Every `_id` stored in `index`, as a search through nginx answers: once the standby that answers
   * searches has replayed what the primary acknowledged (a reader may not see it before).
   */
  async function storedIds(index: string, size: number): Promise<{ total: number; ids: string[] }> {
    await cluster.waitForReplay();
    const body = await traffic.untilOk('search', async () =>
      post(
        `${logsUrl}/api/v1/_elastic/${index}/_search`,
        { size, track_total_hits: true, sort: [{ '@timestamp': 'asc' }], query: { match_all: {} } },
        await shipper(),
      ),
    );
    const answer = json(body);
    return { total: answer.hits.total.value as number, ids: answer.hits.hits.map((hit: { _id: string }) => hit._id) };
  }

  /** Requests of `path` each instance logged since line `from` of its output. */
  const served = (instances: Instance[], check: (line: Record<string, any>) => boolean, from: number[] = [0, 0]) =>
    instances.map((instance, i) => instance.cli.lines.slice(from[i]).filter(check).length);
  const linesNow = (instances: Instance[]) => instances.map((instance) => instance.cli.lines.length);

  test('through nginx: logins, proxied calls, ingestion and searches, each answered by both instances in turn', async () => {
    const gatewayFrom = linesNow(gateways);
    const token = await gatewayLogin();
    for (let i = 0; i < 4; i += 1) {
      const body = await traffic.untilOk('proxied call', () =>
        fetch(`${gatewayUrl}/api/v1/master-data/provinsi/${i}`, { headers: { authorization: token } }),
      );
      assert.equal(json(body).path, `/provinsi/${i}`);
    }
    // Log lines are written in blocks, a moment later.
    await eventually(async () =>
      assert.deepEqual(
        served(gateways, (line) => line.msg === 'proxied' && line.status === 200, gatewayFrom).map((count) => count > 0),
        [true, true],
        'round robin: both gateways proxied, with one login token',
      ),
    );

    const logsFrom = linesNow(logs);
    const index = 'cluster-basic';
    await ship('ingest', index, [
      { _id: 'basic-1', '@timestamp': new Date().toISOString(), message: 'first through nginx' },
      { _id: 'basic-2', '@timestamp': new Date().toISOString(), message: 'second through nginx' },
    ]);
    for (let i = 0; i < 4; i += 1) assert.deepEqual((await storedIds(index, 10)).ids, ['basic-1', 'basic-2']);
    await eventually(async () =>
      assert.deepEqual(
        served(logs, (line) => String(line.req?.path).endsWith('/_search'), logsFrom).map((count) => count > 0),
        [true, true],
        'both logs instances answered searches, and found what one of them stored',
      ),
    );
  });

  /** A series of a logs instance's /metrics, for read replica 1. */
  async function replicaMetric(instance: Instance, name: string): Promise<number | undefined> {
    const text = await (await fetch(`http://127.0.0.1:${instance.port}/metrics`)).text();
    const line = text.split('\n').find((each) => each.startsWith(`${name}{replica="1"} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  }

  test('searches are answered by the standby', async () => {
    await eventually(async () => {
      for (const instance of logs) assert.equal(await replicaMetric(instance, 'logs_read_replica_up'), 1);
    });
    await ship('ingest for the standby', 'cluster-standby', [
      { _id: 'standby-1', '@timestamp': new Date().toISOString(), message: 'answered by the standby' },
    ]);
    await cluster.waitForReplay();
    // No alert rule exists yet: nothing but these searches reads the log tables on the standby.
    const scans = await cluster.standbyTableScans('gerbang_logs');
    for (let i = 0; i < 2; i += 1) assert.deepEqual((await storedIds('cluster-standby', 10)).ids, ['standby-1']);
    await eventually(async () => assert.ok((await cluster.standbyTableScans('gerbang_logs')) > scans), 30_000, 200);
  });

  /** A logout through nginx is refused by both instances, long before their session caches would expire. */
  async function logoutRefusedEverywhere(measure: string): Promise<void> {
    const token = await gatewayLogin();
    const profile = (instance: Instance) =>
      fetch(`http://127.0.0.1:${instance.port}/api/v1/auth/profile`, { headers: { authorization: token } }).then((r) => r.status);
    // Each instance has checked the session and keeps it in its cache.
    assert.deepEqual(await Promise.all(gateways.map(profile)), [200, 200]);
    await traffic.untilOk('logout', () => fetch(`${gatewayUrl}/api/v1/auth/logout`, { method: 'POST', headers: { authorization: token } }));
    const loggedOutAt = performance.now();
    await eventually(async () => assert.deepEqual(await Promise.all(gateways.map(profile)), [401, 401]), 5_000, 20);
    measured.set(measure, `${Math.round(performance.now() - loggedOutAt)} ms`);
  }

  test(`a logout on one gateway instance is refused on the other, long before its ${SESSION_CACHE} session cache would expire`, () =>
    logoutRefusedEverywhere('logout refused on both instances after'));

  test('kill -9 one gateway and one logs instance under load: no acknowledged event lost or stored twice, every client error fixed by a retry', async () => {
    const token = await gatewayLogin();
    const index = 'cluster-load';
    const BATCH = 20;
    let running = true;
    let restarting: Promise<unknown> | undefined;
    let batches = 0;
    let calls = 0;
    const shipping = (async () => {
      for (let b = 0; running; b += 1) {
        const now = Date.now();
        const docs = Array.from({ length: BATCH }, (_, i) => ({
          _id: `b${b}-${i}`,
          '@timestamp': new Date(now + i).toISOString(),
          message: `load batch ${b} event ${i}`,
        }));
        await ship('load batch', index, docs);
        batches += 1;
        traffic.emit('progress');
      }
    })();
    const calling = (async () => {
      for (let n = 0; running; n += 1) {
        await traffic.untilOk('load call', () =>
          fetch(`${gatewayUrl}/api/v1/master-data/load/${n}`, { headers: { authorization: token } }),
        );
        calls += 1;
        traffic.emit('progress');
      }
    })();
    const stopped = Promise.all([shipping, calling]).then(() => Promise.reject(new Error('the clients stopped')));
    const until = async (check: () => boolean) => {
      while (!check()) await Promise.race([once(traffic, 'progress'), stopped]);
    };

    try {
      await until(() => batches >= 5 && calls >= 10);
      const [batchesAtKill, callsAtKill] = [batches, calls];
      const killedAt = performance.now();
      await Promise.all([kill(gateways[0]!), kill(logs[0]!)]);
      // Started again at once, as an orchestrator would: they rejoin while the load goes on.
      restarting = Promise.all([restart(gateways, 0), restart(logs, 0)]);
      // Long enough for nginx to have sent both clients to the dead instances and back.
      await until(() => batches >= batchesAtKill + 10 && calls >= callsAtKill + 20);
      measured.set(
        'gateway: kill -9 to proxied calls succeeding through nginx',
        `${Math.round(traffic.recoveredAfter('load call', killedAt))} ms`,
      );
      measured.set(
        'logs: kill -9 to batches acknowledged through nginx',
        `${Math.round(traffic.recoveredAfter('load batch', killedAt))} ms`,
      );
      measured.set(
        'read replica lag under load (logs_read_replica_lag_seconds of logs-2)',
        `${((await replicaMetric(logs[1]!, 'logs_read_replica_lag_seconds')) ?? Number.NaN) * 1000} ms`,
      );
      measured.set(
        'standby replay lag under load (pg_stat_replication.replay_lag)',
        `${(await cluster.replayLagMs())?.toFixed(1) ?? 'idle'} ms`,
      );
    } finally {
      running = false;
    }
    await Promise.allSettled([shipping, calling]);
    await Promise.all([shipping, calling]);
    measured.set('standby: primary LSN replayed after the load within', `${Math.round(await cluster.waitForReplay())} ms`);
    await restarting;

    const retried = traffic.failures.filter((failure) => failure.what.startsWith('load'));
    measured.set('client errors during the kills', JSON.stringify(retried.map((f) => `${f.what} ${f.status} ${f.detail.slice(0, 60)}`)));
    for (const failure of retried) assert.ok(RETRYABLE.has(failure.status), `an error a retry fixes: ${JSON.stringify(failure)}`);

    const expected = Array.from({ length: batches }, (_, b) => Array.from({ length: BATCH }, (_, i) => `b${b}-${i}`)).flat();
    // Both logs instances (the restarted one too) answer the same.
    for (let i = 0; i < 2; i += 1) {
      const stored = await storedIds(index, expected.length + 50);
      assert.equal(stored.total, expected.length, 'every acknowledged event, each once');
      assert.deepEqual([...stored.ids].sort(), [...expected].sort());
    }
  });

  /**
   * An alert rule made to fire at once; resolves once it fired, with one webhook and one alert, and
   * (`evaluatedAgain`) once a later evaluation found the alert open and sent nothing more.
   */
  async function firesOnce(round: string, evaluatedAgain: boolean): Promise<void> {
    const word = `clusteralert${round}`;
    await ship(`alert ${round} event`, 'cluster-alerts', [
      { _id: word, '@timestamp': new Date().toISOString(), message: `disk full ${word}` },
    ]);
    const auth = await logsAdmin();
    const created = await traffic.untilOk(
      'create rule',
      () =>
        post(
          `${logsUrl}/api/v1/alerts/rules`,
          {
            name: `cluster ${round}`,
            query: word,
            window: '1h',
            interval: '5s',
            condition: { type: 'above', threshold: 0 },
            severity: 'high',
            webhook: { url: receiver.url, secret: WEBHOOK_SECRET },
          },
          auth,
        ),
      (status) => status === 201,
    );
    const ruleId = json(created).id as string;
    const forRule = () => receiver.received.filter((hook) => hook.json.rule.id === ruleId);
    await eventually(async () => assert.equal(forRule().length, 1, 'the firing webhook'), 30_000, 50);
    const rule = async () =>
      json(await traffic.untilOk('read rule', () => fetch(`${logsUrl}/api/v1/alerts/rules/${ruleId}`, { headers: auth })));
    if (evaluatedAgain) {
      const firedAt = Date.parse((await rule()).last_evaluated_at as string);
      // The next evaluation (either instance's, 5 s later) finds the alert open and sends nothing.
      await eventually(async () => assert.ok(Date.parse((await rule()).last_evaluated_at as string) > firedAt), 30_000, 200);
    }
    assert.deepEqual(
      forRule().map((hook) => hook.json.event),
      ['alert.firing'],
      `rule ${round}: one webhook`,
    );
    const active = json(await traffic.untilOk('active alerts', () => fetch(`${logsUrl}/api/v1/alerts/active`, { headers: auth })));
    assert.equal(active.data.filter((alert: { rule_id: string }) => alert.rule_id === ruleId).length, 1, `rule ${round}: one alert`);
  }

  test('an alert rule fires once with one webhook; so does one made after either logs instance is killed (each has run the evaluator)', async () => {
    // Both evaluate and race for each due rule.
    await firesOnce('both', true);
    for (const index of [0, 1]) {
      await kill(logs[index]!);
      const restarting = restart(logs, index);
      await firesOnce(`without${index + 1}`, false);
      await restarting;
    }
  });

  test('after a PostgreSQL restart: logins, proxied calls, ingestion and searches through nginx work again, and the standby follows', async () => {
    const failuresBefore = traffic.failures.length;
    const restartedAt = performance.now();
    await cluster.restartPrimary();
    const token = await gatewayLogin();
    await traffic.untilOk('proxied call', () =>
      fetch(`${gatewayUrl}/api/v1/master-data/after-restart`, { headers: { authorization: token } }),
    );
    await ship('ingest after restart', 'cluster-restart', [
      { _id: 'after-restart', '@timestamp': new Date().toISOString(), message: 'after restart' },
    ]);
    for (let i = 0; i < 2; i += 1) assert.deepEqual((await storedIds('cluster-restart', 10)).ids, ['after-restart']);
    measured.set('PostgreSQL restart to a batch stored and found through nginx', `${Math.round(performance.now() - restartedAt)} ms`);
    await cluster.waitForReplay();
    for (const failure of traffic.failures.slice(failuresBefore))
      assert.ok(RETRYABLE.has(failure.status), `an error a retry fixes: ${JSON.stringify(failure)}`);
  });

  test('after the PostgreSQL restart, a logout on one gateway instance is still refused on the other', async () => {
    // Both listeners are back (each says so once it listens again), then the same rule as before the restart.
    await eventually(async () => {
      for (const gateway of gateways) assert.ok(gateway.cli.lines.some((line) => line.msg === LISTENER_RESTORED));
    }, 30_000);
    await logoutRefusedEverywhere('logout refused on both instances after the restart, after');
  });

  test('signing keys rotated, then each gateway restarted in turn: no token refused at any step', async () => {
    const rotated = await runCli(['rotate-signing-keys'], {
      GATEWAY_DATABASE_URL: cluster.primaryUrl('gerbang_gateway'),
      LOGS_DATABASE_URL: cluster.primaryUrl('gerbang_logs'),
    });
    assert.equal(rotated.status, 0, rotated.stderr);
    const loginOn = async (instance: Instance) =>
      json(
        await traffic.untilOk('direct login', () =>
          post(`http://127.0.0.1:${instance.port}/api/v1/auth/login`, { no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD }),
        ),
      ).data.token as string;
    const statusOn = (instance: Instance, token: string) =>
      fetch(`http://127.0.0.1:${instance.port}/api/v1/auth/profile`, { headers: { authorization: token } }).then((r) => r.status);
    const tokens = [await loginOn(gateways[0]!), await loginOn(gateways[1]!)];
    for (const index of [0, 1]) {
      gateways[index]!.cli.child.kill('SIGTERM');
      await gateways[index]!.cli.exited;
      await restart(gateways, index);
      tokens.push(await loginOn(gateways[0]!), await loginOn(gateways[1]!));
      const statuses: number[] = [];
      for (const token of tokens) for (const instance of gateways) statuses.push(await statusOn(instance, token));
      assert.deepEqual(
        statuses,
        statuses.map(() => 200),
        `after restarting gateway ${index + 1}: every token works on both`,
      );
    }
  });
});
