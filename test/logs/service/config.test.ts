import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { loadLogsConfig } from '../../../src/logs/config.js';
import { LOGS_NODE_OPTIONS, youngGenerationSized } from '../../../src/logs/node-options.js';
import { ConfigError } from '../../../src/shared/config/env.js';
import { nodeArgs } from '../../helpers/node-args.js';

test('logs defaults follow the runtime contract', () => {
  const config = loadLogsConfig({});
  assert.equal(config.port, 8081);
  assert.equal(config.token.accessTtlMs, 300_000);
  assert.equal(config.databaseUrl, 'sqlite:./data/logs.sqlite');
  assert.equal(config.admin.username, 'admin');
  assert.equal(config.admin.password, undefined);
  assert.equal(config.retentionDays, 30);
  assert.ok(Object.isFrozen(config));
  assert.equal(loadLogsConfig({ DATA_DIR: '/srv/gerbang' }).databaseUrl, 'sqlite:/srv/gerbang/logs.sqlite');
});

test('a bad logs setting names its variable', () => {
  const cases: Record<string, string>[] = [
    { LOGS_PORT: 'abc' },
    { LOGS_ACCESS_TOKEN_TTL: 'soon' },
    { LOGS_ACCESS_TOKEN_TTL: '0' },
    { LOGS_REFRESH_TOKEN_TTL: '10s' },
    { LOGS_DATABASE_URL: 'mysql://x' },
    { LOGS_ADMIN_PASSWORD: 'weak' },
    { LOGS_RETENTION_DAYS: '0' },
    { LOGS_API_RATE_PER_USER: 'many' },
    { LOGS_INGEST_BODY_LIMIT: '10' },
  ];
  for (const env of cases) {
    const [name] = Object.keys(env) as [string];
    assert.throws(
      () => loadLogsConfig(env),
      (error: unknown) => error instanceof ConfigError && error.variable === name && error.message.includes(name),
      name,
    );
  }
});

test('the CLI stops on a bad logs setting with one line naming it, for `logs` and for `all`', () => {
  for (const command of ['logs', 'all']) {
    const result = spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), command], {
      env: { ...process.env, LOGS_PORT: 'eighty', DATA_DIR: '/nonexistent-dir-never-created' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 1, command);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, /LOGS_PORT/);
  }
});

test("the logs service's young generation counts as sized when an operator set it on node's command line or in NODE_OPTIONS", () => {
  assert.equal(youngGenerationSized([], ''), false);
  assert.equal(youngGenerationSized(['--import', 'tsx'], '--max-old-space-size=2048'), false);
  assert.equal(youngGenerationSized(['--max-semi-space-size=32'], ''), true);
  assert.equal(youngGenerationSized([], '--enable-source-maps  --max_semi_space_size=128'), true);
  assert.equal(youngGenerationSized(LOGS_NODE_OPTIONS, ''), true);
});
