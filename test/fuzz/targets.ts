// The two services as fuzz targets: built in-process with the usual test helpers, their OpenAPI
// documents read from the services themselves, and the tables a refused request must not touch.
import fc from 'fast-check';
import type { DialectName } from '../../src/shared/db/database.js';
import { startTestGateway } from '../helpers/gateway.js';
import { PASSWORD, startTestLogs } from '../helpers/logs.js';
import { actor, snapshotTables, type FuzzResponse, type FuzzTarget } from './fuzz-harness.js';
import { INJECTIONS, operationsOf, type FuzzRequest } from './openapi-arbitraries.js';

const POSTGRES_ONLY = new Set(['log_blocks', 'log_batches', 'log_postings']);
/** Failed logins are counted and audited: that is their point, not a change by a refused request. */
const GATEWAY_TABLES = [
  'hak_akses',
  'users',
  'sessions',
  'sso_identities',
  'sso_used_tokens',
  'gateway_signing_keys',
  'user_totp',
  'user_recovery_codes',
] as const;
const LOGS_TABLES = [
  'logs_tenants',
  'logs_roles',
  'logs_users',
  'logs_user_roles',
  'logs_sessions',
  'logs_refresh_tokens',
  'logs_signing_keys',
  'log_entries',
  'log_displaced',
  'log_blocks',
  'log_batches',
  'log_postings',
  'log_rollups',
  'log_host_rollups',
  'log_fields',
  'log_facet_values',
  'log_unfaceted_fields',
  'logs_alert_rules',
  'logs_alerts',
  'apm_spans',
  'infra_metric_points',
  // Not logs_mfa_challenges: a right password of an enrolled user is answered 401 with a new challenge.
  'logs_mfa_totp',
  'logs_mfa_recovery_codes',
  'logs_passkeys',
  'logs_saved_searches',
] as const;

/** Limits that would otherwise lock the fuzzing actors out of their own accounts mid-run. */
const GATEWAY_ENV = { LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000', LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000' };
const LOGS_ENV = {
  LOGS_API_RATE_PER_USER: '1000000',
  LOGS_INGEST_RATE_PER_TENANT: '1000000',
  LOGS_ALERTS_EVAL_INTERVAL: '0',
  LOGS_SELF_METRICS_INTERVAL: '0',
};

const toResponse = (response: { statusCode: number; body: string; headers: Record<string, unknown> }): FuzzResponse => ({
  statusCode: response.statusCode,
  body: response.body,
  headers: response.headers,
});

function parse(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Spec 2.1: `{code, status: false, message, data?}` with `code` the HTTP status. */
export function gatewayErrorShapeProblem(status: number, body: string): string | undefined {
  const value = parse(body) as Record<string, unknown> | undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `not a JSON object: ${body.slice(0, 100)}`;
  if (value.code !== status) return `code ${String(value.code)} for status ${status}`;
  if (value.status !== false) return 'status is not false';
  if (typeof value.message !== 'string' || value.message === '') return 'no message';
  if ('data' in value && (typeof value.data !== 'object' || value.data === null || Array.isArray(value.data)))
    return 'data is not an object';
  const extra = Object.keys(value).filter((key) => !['code', 'status', 'message', 'data'].includes(key));
  return extra.length > 0 ? `unexpected fields ${extra.join(', ')}` : undefined;
}

/** Spec 7.2: `{"error": string}`, a 400 may add `detail` (string) and `position` (integer). */
export function logsErrorShapeProblem(status: number, body: string): string | undefined {
  const value = parse(body) as Record<string, unknown> | undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `not a JSON object: ${body.slice(0, 100)}`;
  if (typeof value.error === 'object' && value.error !== null) return elasticErrorShapeProblem(status, value);
  if (typeof value.error !== 'string' || value.error === '') return 'no error message';
  if ('detail' in value && typeof value.detail !== 'string') return 'detail is not a string';
  if ('position' in value && !Number.isInteger(value.position)) return 'position is not an integer';
  // A login that needs a second factor says what to send next (docs/logs-api.md "Second factor").
  if ('mfa' in value && (status !== 401 || typeof value.mfa !== 'object' || value.mfa === null)) return 'mfa is not an object of a 401';
  const extra = Object.keys(value).filter((key) => !['error', 'detail', 'position', 'mfa'].includes(key));
  return extra.length > 0 ? `unexpected fields ${extra.join(', ')}` : undefined;
}

/** The Elasticsearch-compatible API's errors (docs/elasticsearch.md): {error: {root_cause, type, reason}, status}. */
function elasticErrorShapeProblem(status: number, value: Record<string, unknown>): string | undefined {
  const error = value.error as Record<string, unknown>;
  if (value.status !== status) return `status ${String(value.status)} in the body, ${status} on the wire`;
  if (typeof error.type !== 'string' || typeof error.reason !== 'string' || error.reason === '') return 'no error type or reason';
  if (!Array.isArray(error.root_cause) || error.root_cause.length !== 1) return 'no root_cause';
  const extra = Object.keys(value).filter((key) => key !== 'error' && key !== 'status');
  return extra.length > 0 ? `unexpected fields ${extra.join(', ')}` : undefined;
}

export async function gatewayTarget(dialect: DialectName): Promise<FuzzTarget> {
  const gateway = await startTestGateway(dialect, GATEWAY_ENV);
  // Users the requests may act on (never the actors themselves: their sessions carry the run).
  const victims = await Promise.all([gateway.createUser(), gateway.createUser({ hak_akses_id: 'admin' })]);
  const unpermitted = await gateway.createUser({ hak_akses_id: 'pegawai' });
  const document = gateway.app.swagger() as Parameters<typeof operationsOf>[0];
  return {
    service: 'gateway',
    // The gateway's own document: the proxied services' operations have their own tests.
    operations: operationsOf(document),
    actors: [
      actor('admin', async () => ({ authorization: await gateway.login() })),
      actor('unpermitted', async () => ({
        authorization: await gateway.login(unpermitted.fields.no_pegawai, unpermitted.fields.kata_sandi),
      })),
      actor('anonymous', async () => ({})),
    ],
    hints: {
      known: {
        id: [...victims.map((victim) => victim.id), '1', 'admin'],
        no_pegawai: [...victims.map((victim) => victim.fields.no_pegawai), 'admin'],
        hak_akses_id: ['admin', 'pegawai'],
        kata_sandi: ['Rahasia#123', 'Baru#Rahasia456'],
        konfirmasi_kata_sandi: ['Rahasia#123', 'Baru#Rahasia456'],
        filter: ['nama:Pegawai', 'no_pegawai:1980', ...INJECTIONS.slice(0, 6)],
        sort: ['nama', '-nama', 'no_pegawai', 'created_at'],
      },
    },
    send: async (request) =>
      toResponse(await gateway.request({ method: request.method, url: request.url, headers: request.headers, payload: request.payload })),
    snapshot: () => snapshotTables(gateway.database.db, GATEWAY_TABLES),
    errorShapeProblem: gatewayErrorShapeProblem,
    // Documented: SSO answers 503 while OIDC_ISSUER is unset (as here).
    allowed5xx: { 'GET /auth/sso-nonce': [503], 'POST /auth/login-sso': [503] },
    openToEveryone: new Set(),
    close: () => gateway.close(),
  };
}

/** Bodies of the ingestion endpoints, which the document leaves raw: NDJSON _bulk and OTLP JSON. */
function ingestRequests(): Record<string, fc.Arbitrary<FuzzRequest>> {
  const document = fc.dictionary(
    fc.constantFrom('message', '@timestamp', 'level', 'service', 'host', 'attributes', 'a.b', ''),
    fc.jsonValue({ maxDepth: 3 }),
    { maxKeys: 5 },
  );
  const line = fc.oneof(
    fc
      .tuple(fc.constantFrom('index', 'create', 'delete', 'update', 'bogus'), document)
      .map(([action, body]) => `${JSON.stringify({ [action]: {} })}\n${JSON.stringify(body)}`),
    fc.constantFrom('{', '{"index":{}}', '[]', '"x"', '{"index":{}}\n{"nested":' + '['.repeat(3000) + ']'.repeat(3000) + '}', '\u0000'),
  );
  const bulk = fc
    .tuple(fc.array(line, { minLength: 0, maxLength: 4 }), fc.constantFrom('application/x-ndjson', 'application/json', 'text/plain'))
    .map(([lines, type]): FuzzRequest => ({
      method: 'POST',
      url: '',
      headers: { 'content-type': type },
      payload: `${lines.join('\n')}\n`,
      mutation: 'ingest body',
    }));
  const otlp = fc
    .tuple(fc.jsonValue({ maxDepth: 5 }), fc.constantFrom('application/json', 'application/x-protobuf', 'text/plain'))
    .map(([value, type]): FuzzRequest => ({
      method: 'POST',
      url: '',
      headers: { 'content-type': type },
      payload:
        type === 'application/x-protobuf'
          ? Buffer.from(JSON.stringify(value))
          : JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [value] }] }], resourceSpans: value, resourceMetrics: value }),
      mutation: 'ingest body',
    }));
  // Search bodies built from the query DSL's words, nested, with wrong types among them.
  const dslWord = fc.constantFrom(
    'query',
    'bool',
    'filter',
    'must',
    'should',
    'must_not',
    'range',
    '@timestamp',
    'gte',
    'lt',
    'term',
    'terms',
    'query_string',
    'exists',
    'field',
    'aggs',
    'date_histogram',
    'fixed_interval',
    'terms',
    'size',
    'from',
    'sort',
    'search_after',
    'percentiles',
    'avg',
    'match',
    'prefix',
    'ids',
    'values',
    'track_total_hits',
    'extended_bounds',
    'min_doc_count',
    'level',
    'host',
    'x',
    'stats',
    'extended_stats',
    'value_count',
    'filters',
    'range',
    'ranges',
    'date_range',
    'histogram',
    'interval',
    'top_hits',
    'missing',
    'pit',
    'id',
    'keep_alive',
    '_shard_doc',
    'docs',
    'ids',
    '_id',
    '_index',
    'scroll_id',
    'scroll',
  );
  const dsl = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom('now-1h', '1m', '*', 'status:[1 TO', 'desc'),
      tie('object'),
    ),
    object: fc.dictionary(dslWord, tie('value'), { maxKeys: 4 }),
  })).object;
  const search = dsl.map((body): FuzzRequest => ({
    method: 'POST',
    url: '',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
    mutation: 'search body',
  }));
  const msearch = fc
    .array(fc.tuple(fc.dictionary(fc.constantFrom('index', 'x'), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }), dsl), { maxLength: 3 })
    .map((pairs): FuzzRequest => ({
      method: 'POST',
      url: '',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: pairs.map(([header, body]) => `${JSON.stringify(header)}\n${JSON.stringify(body)}\n`).join(''),
      mutation: 'search body',
    }));
  const at = (method: string, url: string, body: fc.Arbitrary<FuzzRequest>) => body.map((request) => ({ ...request, method, url }));
  return {
    'POST /api/v1/_elastic/_search': at('POST', '/api/v1/_elastic/_search', search),
    'POST /api/v1/_elastic/{index}/_search': at('POST', '/api/v1/_elastic/app-*/_search', search),
    'POST /api/v1/_elastic/_msearch': at('POST', '/api/v1/_elastic/_msearch', msearch),
    'POST /api/v1/_elastic/_bulk': at('POST', '/api/v1/_elastic/_bulk', bulk),
    'PUT /api/v1/_elastic/_bulk': at('PUT', '/api/v1/_elastic/_bulk', bulk),
    'POST /api/v1/_elastic/{index}/_bulk': at('POST', '/api/v1/_elastic/logs-x/_bulk', bulk),
    'PUT /api/v1/_elastic/{index}/_doc/{id}': at('PUT', '/api/v1/_elastic/logs-x/_doc/fuzz-1', search),
    'POST /api/v1/_elastic/{index}/_doc': at('POST', '/api/v1/_elastic/logs-x/_doc', search),
    'PUT /api/v1/_elastic/{index}/_create/{id}': at('PUT', '/api/v1/_elastic/logs-x/_create/fuzz-2', search),
    'POST /api/v1/_elastic/_mget': at('POST', '/api/v1/_elastic/_mget', search),
    'POST /api/v1/_elastic/{index}/_mget': at('POST', '/api/v1/_elastic/logs-x/_mget', search),
    'POST /api/v1/_elastic/{index}/_count': at('POST', '/api/v1/_elastic/app-*/_count', search),
    'POST /api/v1/_elastic/_search/scroll': at('POST', '/api/v1/_elastic/_search/scroll', search),
    'DELETE /api/v1/_elastic/_search/scroll': at('DELETE', '/api/v1/_elastic/_search/scroll', search),
    'DELETE /api/v1/_elastic/_pit': at('DELETE', '/api/v1/_elastic/_pit', search),
    'POST /v1/logs': at('POST', '/v1/logs', otlp),
    'POST /v1/traces': at('POST', '/v1/traces', otlp),
    'POST /v1/metrics': at('POST', '/v1/metrics', otlp),
  };
}

export async function logsTarget(dialect: DialectName): Promise<FuzzTarget> {
  const logs = await startTestLogs(dialect, LOGS_ENV);
  const admin = await logs.admin();
  const victimRole = await logs.request({
    method: 'POST',
    url: '/api/roles',
    headers: admin,
    payload: { name: 'fuzzvictim', permissions: ['logs:read'] },
  });
  const victimUser = await logs.request({
    method: 'POST',
    url: '/api/users',
    headers: admin,
    payload: { username: 'fuzzvictim', email: 'fuzzvictim@example.go.id', password: PASSWORD, roles: ['fuzzvictim'] },
  });
  const tenant = await logs.request({ method: 'POST', url: '/api/tenants', headers: admin, payload: { name: 'fuzztenant' } });
  const rule = await logs.request({
    method: 'POST',
    url: '/api/v1/alerts/rules',
    headers: admin,
    payload: { name: 'fuzz rule', query: 'level:error', window: '5m', condition: { type: 'above', threshold: 10 }, severity: 'low' },
  });
  for (const response of [victimRole, victimUser, tenant, rule])
    if (response.statusCode !== 201) throw new Error(`fuzz fixture: ${response.statusCode} ${response.body}`);
  const unpermittedName = 'fuzznobody';
  const response = await logs.request({ method: 'GET', url: '/openapi.json' });
  const document = response.json() as Parameters<typeof operationsOf>[0];
  return {
    service: 'logs',
    operations: operationsOf(document),
    actors: [
      actor('admin', () => logs.admin()),
      actor('unpermitted', async () => {
        const existing = await logs.request({
          method: 'POST',
          url: '/api/login',
          payload: { username: unpermittedName, password: PASSWORD },
        });
        if (existing.statusCode === 200) return { authorization: `Bearer ${existing.json().access_token}` };
        return (await logs.userWith([], { username: unpermittedName })).headers;
      }),
      actor('anonymous', async () => ({})),
    ],
    hints: {
      known: {
        id: [victimRole.json().id, victimUser.json().id, tenant.json().id, rule.json().id, 'default', 'admin', 'viewer'],
        username: ['fuzzvictim', 'admin'],
        roles: [['fuzzvictim'], ['admin'], ['viewer']],
        permissions: [['logs:read'], ['users:manage', 'roles:manage'], []],
        password: [PASSWORD],
        field: ['@timestamp', 'level', 'message', 'service', 'host', 'attributes.user', 'trace_id'],
        query: ['level:error', 'service:gateway AND NOT level:debug', 'message:"timeout"', '', ...INJECTIONS.slice(0, 12)],
        url: ['http://127.0.0.1:9/hook', 'http://localhost:9/x', 'http://169.254.169.254/latest', 'ftp://127.0.0.1/', 'not a url'],
        interval: ['1m', '5m', '1h', '1d', '0s', '99999999999999999999d'],
        index: ['logs', 'logs-gateway', '_all', '.kibana'],
      },
    },
    send: async (request) =>
      toResponse(await logs.request({ method: request.method, url: request.url, headers: request.headers, payload: request.payload })),
    // Each store's own tables: SQLite's rows and displaced entries, PostgreSQL's blocks and postings.
    snapshot: () =>
      snapshotTables(
        logs.database.db,
        LOGS_TABLES.filter((table) =>
          dialect === 'sqlite' ? !POSTGRES_ONLY.has(table) : table !== 'log_entries' && table !== 'log_displaced',
        ),
      ),
    errorShapeProblem: logsErrorShapeProblem,
    // Documented: the Kubernetes views answer 503 when no cluster is configured (as here).
    allowed5xx: { 'GET /api/v1/k8s/cluster/health': [503], 'GET /api/v1/k8s/nodes': [503], 'GET /api/v1/k8s/pods': [503] },
    openToEveryone: new Set(),
    extraRequests: ingestRequests(),
    close: () => logs.close(),
  };
}
