import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { loadGatewayConfig } from '../../src/gateway/config.js';
import { loadLogsConfig } from '../../src/logs/config.js';
import { ConfigError } from '../../src/shared/config/env.js';
import { parseDuration } from '../../src/shared/config/duration.js';
import { killAfterMs, stopDeadlineMs } from '../../src/shared/http/drain.js';
import { nodeArgs } from '../helpers/node-args.js';

test('durations', () => {
  assert.equal(parseDuration('90d'), 90 * 86_400_000);
  assert.equal(parseDuration('12h'), 12 * 3_600_000);
  assert.equal(parseDuration('2s'), 2000);
  assert.equal(parseDuration('300'), 300_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('0'), 0);
  for (const bad of ['', '-1d', '1.5h', '1w', 'abc', '1 d']) assert.equal(parseDuration(bad), undefined, bad);
});

test('defaults follow the runtime contract', () => {
  const config = loadGatewayConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.token.ttlMs, 24 * 3_600_000);
  assert.equal(config.passwordMaxAgeMs, 90 * 86_400_000);
  assert.equal(config.databaseUrl, 'sqlite:./data/gateway.sqlite');
  assert.deepEqual(config.corsOrigins, []);
  assert.equal(config.requestTimeoutMs, 120_000);
  assert.equal(loadGatewayConfig({ GATEWAY_REQUEST_TIMEOUT: '15m' }).requestTimeoutMs, 900_000);
  assert.ok(Object.isFrozen(config));
});

test('both services read their trust-proxy setting alike: true, a hop count, or addresses', () => {
  const cases: [string | undefined, boolean | number | string][] = [
    [undefined, false],
    ['true', true],
    ['2', 2],
    ['10.0.0.0/8, 127.0.0.1', '10.0.0.0/8, 127.0.0.1'],
  ];
  for (const [value, expected] of cases) {
    assert.equal(loadGatewayConfig({ GATEWAY_TRUST_PROXY: value }).trustProxy, expected, value);
    assert.equal(loadLogsConfig({ LOGS_TRUST_PROXY: value }).trustProxy, expected, value);
  }
});

test('a bad value names its variable', () => {
  const cases: Record<string, string>[] = [
    { GATEWAY_PORT: 'abc' },
    { GATEWAY_PORT: '70000' },
    { PASSWORD_MAX_AGE: 'forever' },
    { GATEWAY_TOKEN_TTL: '1w' },
    { GATEWAY_REQUEST_TIMEOUT: 'long' },
    { GATEWAY_DATABASE_URL: 'mysql://x' },
    { LOG_LEVEL: 'loud' },
    { GATEWAY_ADMIN_PASSWORD: 'weak' },
  ];
  for (const env of cases) {
    const [name] = Object.keys(env) as [string];
    assert.throws(
      () => loadGatewayConfig(env),
      (error: unknown) => error instanceof ConfigError && error.variable === name && error.message.includes(name),
      name,
    );
  }
});

test('the CLI stops on a bad setting with one line naming it and a non-zero exit', () => {
  const result = spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'gateway'], {
    env: { ...process.env, GATEWAY_PORT: 'eighty', DATA_DIR: '/nonexistent-dir-never-created' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.status, 1);
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /GATEWAY_PORT/);
});

test('the shutdown settings: both services read them, 30 s of drain and no readiness delay by default, at most an hour, and `all` kills only after a whole stop', () => {
  for (const load of [loadGatewayConfig, loadLogsConfig]) {
    assert.deepEqual(load({}).shutdown, { readinessDelayMs: 0, drainTimeoutMs: 30_000 });
    assert.deepEqual(load({ SHUTDOWN_READINESS_DELAY: '5s', SHUTDOWN_DRAIN_TIMEOUT: '2m' }).shutdown, {
      readinessDelayMs: 5_000,
      drainTimeoutMs: 120_000,
    });
    for (const [name, value] of [
      ['SHUTDOWN_DRAIN_TIMEOUT', 'soon'],
      ['SHUTDOWN_READINESS_DELAY', '-5s'],
      ['SHUTDOWN_DRAIN_TIMEOUT', '2h'],
    ] as const) {
      assert.throws(
        () => load({ [name]: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(name),
      );
    }
  }
  const settings = { readinessDelayMs: 5_000, drainTimeoutMs: 30_000 };
  assert.ok(killAfterMs(settings) > stopDeadlineMs(settings));
  assert.ok(stopDeadlineMs(settings) > settings.readinessDelayMs + settings.drainTimeoutMs);
});
