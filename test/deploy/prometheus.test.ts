import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { eventually } from '../helpers/eventually.js';
import { startTestGateway } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/listen.js';
import { startTestLogs, uniqueName } from '../helpers/logs.js';
import { closedPort } from '../helpers/upstream.js';

/**
 * Both services' /metrics against Prometheus' own tools (Debian's `prometheus` package, installed
 * by .ci/run): `promtool check metrics`, the alert rules of deploy/prometheus/gerbang-alerts.yaml
 * under `promtool check rules` and `promtool test rules`, and a real Prometheus scraping both
 * services and evaluating the rules. docs/metrics.md.
 */
const RULES = 'deploy/prometheus/gerbang-alerts.yaml';
const RULE_TESTS = 'deploy/prometheus/gerbang-alerts.test.yaml';
const INSTALL = "install Debian's `prometheus` package (.ci/run does)";

/** Runs one of Prometheus' tools; a missing tool fails the test (never skips it). */
function run(tool: 'promtool' | 'prometheus', args: string[], input?: string) {
  const result = spawnSync(tool, args, { input, encoding: 'utf8', timeout: 60_000 });
  if (result.error) assert.fail(`${tool} cannot run (${result.error.message}): ${INSTALL}`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function alertNames(): string[] {
  const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert?: string }[] }[] };
  return rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert!));
}

describe('promtool', () => {
  test('`promtool check metrics` passes on both services’ /metrics, after traffic that fills every family', async () => {
    const logs = await startTestLogs('sqlite');
    const gateway = await startTestGateway('sqlite');
    try {
      const admin = await logs.admin();
      const bulk = await logs.request({
        method: 'POST',
        url: '/api/v1/_elastic/_bulk',
        headers: { ...admin, 'content-type': 'application/x-ndjson' },
        payload: '{"index":{}}\n{"message":"checked by promtool"}\nnot json\n',
      });
      assert.equal(bulk.statusCode, 200);
      await logs.request({ method: 'POST', url: '/api/v1/logs/list/paginate', headers: admin, payload: { query: 'promtool' } });
      await gateway.login();
      await gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { no_pegawai: 'admin', kata_sandi: 'Wrong#1x' } });
      for (const [service, scrape] of [
        ['logs', () => logs.request({ method: 'GET', url: '/metrics' })],
        ['gateway', () => gateway.request({ method: 'GET', url: '/metrics' })],
      ] as const) {
        const text = (await scrape()).body;
        assert.match(text, /_http_request_duration_seconds_bucket\{/, `${service}: request metrics present`);
        const { status, output } = run('promtool', ['check', 'metrics'], text);
        assert.equal(output, '', `${service}: promtool check metrics`);
        assert.equal(status, 0, `${service}: promtool check metrics`);
      }
    } finally {
      await logs.close();
      await gateway.close();
    }
  });

  test('the alert rules pass `promtool check rules` and their unit tests (`promtool test rules`)', () => {
    const checked = run('promtool', ['check', 'rules', RULES]);
    assert.equal(checked.status, 0, checked.output);
    const tested = run('promtool', ['test', 'rules', RULE_TESTS]);
    assert.equal(tested.status, 0, tested.output);
    assert.match(tested.output, /SUCCESS/);
  });

  test('every alert has a unit test where it fires and one where it does not, and a row in docs/metrics.md', () => {
    const tests = parse(readFileSync(RULE_TESTS, 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((unit) => unit.alert_rule_test);
    const docs = readFileSync('docs/metrics.md', 'utf8');
    const names = alertNames();
    assert.ok(names.length >= 6, 'the rules were read');
    for (const name of names) {
      const mine = cases.filter((entry) => entry.alertname === name);
      assert.ok(
        mine.some((entry) => entry.exp_alerts.length > 0),
        `${name}: a case where it fires`,
      );
      assert.ok(
        mine.some((entry) => entry.exp_alerts.length === 0),
        `${name}: a case where it does not`,
      );
      assert.match(docs, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name}: what to do, in docs/metrics.md`);
    }
  });
});

interface PrometheusAnswer<T> {
  status: string;
  data: T;
}

/** A Prometheus on 127.0.0.1 with `config`, in a temp dir; stopped (SIGTERM) and removed by `stop`. */
async function startPrometheus(config: string) {
  run('prometheus', ['--version']);
  const dir = mkdtempSync(join(tmpdir(), 'gerbang-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const port = await closedPort();
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit');
  const base = `http://127.0.0.1:${port}`;
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${base}${path}`);
    assert.equal(response.status, 200, `${path}: ${response.status}`);
    const answer = (await response.json()) as PrometheusAnswer<T>;
    assert.equal(answer.status, 'success');
    return answer.data;
  };
  return {
    api,
    query: (expression: string) =>
      api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expression)}`,
      ),
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('a real Prometheus', () => {
  test('scrapes both services (the logs service behind LOGS_METRICS_TOKEN), loads the rules, and a not-ready gateway makes GerbangNotReady pending', async () => {
    const token = `scrape-${uniqueName('token')}-0123456789`;
    const logs = await startTestLogs('sqlite', { LOGS_METRICS_TOKEN: token });
    const gateway = await startTestGateway('sqlite');
    let prometheus: Awaited<ReturnType<typeof startPrometheus>> | undefined;
    try {
      const logsPort = await listenOnLoopback(logs.app);
      const gatewayPort = await listenOnLoopback(gateway.app);
      prometheus = await startPrometheus(
        [
          'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
          `rule_files: [${JSON.stringify(resolve(RULES))}]`,
          'scrape_configs:',
          '  - job_name: gerbang-gateway',
          `    static_configs: [{ targets: ["127.0.0.1:${gatewayPort}"] }]`,
          '  - job_name: gerbang-logs',
          `    authorization: { type: Bearer, credentials: ${JSON.stringify(token)} }`,
          `    static_configs: [{ targets: ["127.0.0.1:${logsPort}"] }]`,
          '',
        ].join('\n'),
      );
      const { api, query } = prometheus;
      const where = () => `\nprometheus said:\n${prometheus!.output()}`;

      // Both targets up (the logs service's only with the token: a 401 would leave it down).
      await eventually(
        async () => {
          const { activeTargets } = await api<{ activeTargets: { labels: { job: string }; health: string; lastError: string }[] }>(
            '/api/v1/targets',
          );
          const health = Object.fromEntries(activeTargets.map((target) => [target.labels.job, `${target.health} ${target.lastError}`]));
          assert.deepEqual(health, { 'gerbang-gateway': 'up ', 'gerbang-logs': 'up ' }, where());
        },
        60_000,
        200,
      );
      const up = await query('up');
      assert.deepEqual(up.result.map((series) => [series.metric.job, series.value[1]]).sort(), [
        ['gerbang-gateway', '1'],
        ['gerbang-logs', '1'],
      ]);

      // Every rule evaluated against the real series without an error.
      const rules = await eventually(
        async () => {
          const { groups } = await api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules');
          const all = groups.flatMap((group) => group.rules);
          for (const rule of all) assert.equal(rule.health, 'ok', `${rule.name}: ${rule.lastError ?? ''}${where()}`);
          return all.map((rule) => rule.name);
        },
        60_000,
        200,
      );
      assert.deepEqual(rules.sort(), alertNames().sort());
      assert.deepEqual((await query('ALERTS')).result, [], 'nothing pending on healthy services');

      // The gateway's database goes away: /readyz 503, gateway_ready 0, the alert pending.
      await gateway.database.close();
      const pending = await eventually(
        async () => {
          const { result } = await query('ALERTS{alertname="GerbangNotReady"}');
          assert.equal(result.length, 1, where());
          return result[0]!.metric;
        },
        60_000,
        200,
      );
      assert.equal(pending.job, 'gerbang-gateway');
      assert.equal(pending.alertstate, 'pending', 'pending for its `for:` time first');
    } finally {
      await prometheus?.stop();
      await gateway.close().catch(() => {});
      await logs.close();
    }
  });
});
