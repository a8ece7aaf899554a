/**
 * Kubernetes views (spec 4.5, issue 6) through the real @kubernetes/client-node.
 *
 * THE ONE MOCK WE ACCEPT: no Kubernetes API server can run on this machine, so a local HTTP server on
 * 127.0.0.1 answers the API paths the client calls (/version, /api/v1/nodes, /api/v1/pods,
 * /api/v1/namespaces/{ns}/pods, /apis/metrics.k8s.io/v1beta1/nodes) with JSON recorded from real
 * clusters (test/fixtures/k8s/*.json: three nodes, one NotReady with MemoryPressure; pods Running,
 * Pending/Unschedulable, CrashLoopBackOff with restarts, Succeeded). It checks the bearer token,
 * filters by namespace and simple label selectors, pages with limit/continue and answers errors with
 * the API server's Status objects, as the real one does. Everything else is real: the client library,
 * a kubeconfig file read through KUBECONFIG, Fastify with the shared error handling.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { loadK8sCluster, type LoadK8sOptions } from '../../../src/logs/modules/k8s/k8s.cluster.js';
import { k8sRoutes } from '../../../src/logs/modules/k8s/k8s.routes.js';
import { clusterHealth, MAX_PROBLEMS, podDisplayStatus } from '../../../src/logs/modules/k8s/k8s.views.js';
import { cpuMillicores, parseQuantity, wholeUnits } from '../../../src/logs/modules/k8s/quantity.js';
import type { V1Node, V1Pod, VersionInfo } from '@kubernetes/client-node';
import { ConfigError, type Env } from '../../../src/shared/config/env.js';
import { AppError } from '../../../src/shared/errors/app-error.js';
import { ERRORS } from '../../../src/shared/errors/catalogue.js';
import { installErrorHandling } from '../../../src/shared/errors/handler.js';
import { createServer as createFastify } from '../../../src/shared/http/create-server.js';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/k8s/${name}.json`, import.meta.url), 'utf8'));
const FIXTURES = { version: fixture('version'), nodes: fixture('nodes'), pods: fixture('pods'), nodeMetrics: fixture('node-metrics') };
const TOKEN = 'eyJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.k8s-console-reader-token.c2lnbmF0dXJl';
/** Shortly after the fixtures were recorded: ages are exact. */
const NOW = Date.parse('2024-05-14T08:21:00Z');

// ---------------------------------------------------------------------------------------------
// The recorded API server

interface FakeApiServer {
  url: string;
  /** Every request as received: path with query, and the Authorization header. */
  requests: { url: string; authorization: string | undefined }[];
  /** metrics-server installed (200) or not (404, as when the metrics.k8s.io group is not registered). */
  metrics: 'ok' | 'missing';
  close(): Promise<void>;
}

/** The API server's error body (a v1 Status), as kube-apiserver sends it. */
function sendStatus(res: ServerResponse, code: number, reason: string, message: string) {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

function sendJson(res: ServerResponse, body: unknown) {
  res.writeHead(200, { 'content-type': 'application/json', 'audit-id': 'b5c0b6a4-7d3e-4d1f-9b2a-6c8e0f1a2b3c' });
  res.end(JSON.stringify(body));
}

/** Equality-based selectors (`a=b`, `a==b`, `a!=b`, comma = and); anything else is a parse error like the real server's. */
function parseSelector(selector: string): ((labels: Record<string, string>) => boolean) | undefined {
  const terms = selector.split(',').map((term) => /^([A-Za-z0-9._/-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)$/.exec(term.trim()));
  if (terms.some((term) => term === null)) return undefined;
  return (labels) =>
    terms.every((term) => {
      const [, key, op, value] = term!;
      return op === '!=' ? labels[key!] !== value : labels[key!] === value;
    });
}

function listPods(res: ServerResponse, url: URL, namespace: string | undefined) {
  let items = (FIXTURES.pods.items as { metadata: { namespace: string; labels?: Record<string, string> } }[]).filter(
    (pod) => namespace === undefined || pod.metadata.namespace === namespace,
  );
  const selector = url.searchParams.get('labelSelector');
  if (selector) {
    const matches = parseSelector(selector);
    if (!matches) return sendStatus(res, 400, 'BadRequest', `unable to parse requirement: found '${selector}', expected: identifier`);
    items = items.filter((pod) => matches(pod.metadata.labels ?? {}));
  }
  const token = url.searchParams.get('continue');
  if (token === 'expired-token') {
    return sendStatus(
      res,
      410,
      'Expired',
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    );
  }
  const offset = token ? Number(JSON.parse(Buffer.from(token, 'base64').toString()).start) : 0;
  const limit = Number(url.searchParams.get('limit') ?? items.length) || items.length;
  const page = items.slice(offset, offset + limit);
  const more = offset + limit < items.length;
  sendJson(res, {
    ...FIXTURES.pods,
    metadata: {
      resourceVersion: FIXTURES.pods.metadata.resourceVersion,
      ...(more
        ? {
            continue: Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 4821391, start: offset + limit })).toString('base64'),
            remainingItemCount: items.length - offset - limit,
          }
        : {}),
    },
    items: page,
  });
}

const tlsFile = (name: string) => readFileSync(new URL(`../../fixtures/k8s/tls/${name}`, import.meta.url));

/** Plain HTTP, or HTTPS with a certificate for 127.0.0.1 signed by the test CA (test/fixtures/k8s/tls). */
async function startFakeApiServer(options: { hang?: boolean; tls?: boolean } = {}): Promise<FakeApiServer> {
  const state: Pick<FakeApiServer, 'requests' | 'metrics'> = { requests: [], metrics: 'ok' };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    state.requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    if (options.hang) return; // accepts the request and never answers
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return sendStatus(res, 401, 'Unauthorized', 'Unauthorized');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const namespaced = /^\/api\/v1\/namespaces\/([a-z0-9-]+)\/pods$/.exec(url.pathname);
    if (req.method !== 'GET')
      return sendStatus(res, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    if (url.pathname === '/version') return sendJson(res, FIXTURES.version);
    if (url.pathname === '/api/v1/nodes') return sendJson(res, FIXTURES.nodes);
    if (url.pathname === '/api/v1/pods') return listPods(res, url, undefined);
    if (namespaced) return listPods(res, url, namespaced[1]);
    if (url.pathname === '/apis/metrics.k8s.io/v1beta1/nodes' && state.metrics === 'ok') return sendJson(res, FIXTURES.nodeMetrics);
    return sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
  };
  const server: Server = options.tls
    ? createHttpsServer({ key: tlsFile('apiserver.key'), cert: tlsFile('apiserver.crt') }, handler)
    : createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  });
}

// ---------------------------------------------------------------------------------------------
// The console side: a kubeconfig file, and the routes on a Fastify app with the shared error handling

const dir = mkdtempSync(join(tmpdir(), 'gerbang-k8s-'));
let kubeconfigCount = 0;

/** A kubeconfig as `kubectl config view --raw` writes it, with token auth (plain HTTP needs insecure-skip-tls-verify). */
function writeKubeconfig(server: string, token = TOKEN, trust: 'skip-verify' | 'test-ca' | 'system' = 'skip-verify'): string {
  const path = join(dir, `kubeconfig-${++kubeconfigCount}`);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: recorded',
      '  cluster:',
      `    server: ${server}`,
      ...(trust === 'skip-verify' ? ['    insecure-skip-tls-verify: true'] : []),
      ...(trust === 'test-ca' ? [`    certificate-authority-data: ${tlsFile('ca.crt').toString('base64')}`] : []),
      'users:',
      '- name: console-reader',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: recorded',
      '  context:',
      '    cluster: recorded',
      '    user: console-reader',
      'current-context: recorded',
      'preferences: {}',
      '',
    ].join('\n'),
  );
  return path;
}

interface Console {
  app: FastifyInstance;
  /** Every log line the app wrote. */
  logs: string[];
  get(url: string, permissions?: string): Promise<{ status: number; body: any; text: string }>;
}

/** `x-test-permissions` stands in for the logs service's bearer token check (its own tests cover that). */
function requirePermission(permission: string) {
  return async (request: { headers: Record<string, unknown> }) => {
    const header = request.headers['x-test-permissions'];
    if (typeof header !== 'string') throw new AppError('LOGS_MISSING_TOKEN');
    if (!header.split(',').includes(permission)) throw new AppError('LOGS_PERMISSION_DENIED');
  };
}

const consoles: Console[] = [];

async function startConsole(env: Env, options: LoadK8sOptions = {}): Promise<Console> {
  const stream = new PassThrough();
  const logs: string[] = [];
  stream.on('data', (chunk: Buffer) => logs.push(...chunk.toString().split('\n').filter(Boolean)));
  const render = (error: AppError) => ({ error: ERRORS[error.code].en });
  const app = createFastify({ logLevel: 'info', bodyLimit: 1_048_576, trustProxy: false, logStream: stream, renderClientError: render });
  installErrorHandling(app, render, 'LOGS_NOT_FOUND');
  await app.register(swagger, {
    openapi: {
      info: { title: 'logs (k8s views under test)', version: '1.0.0' },
      // The logs service's schemes, which the views' routes name.
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'Authorization' },
        },
      },
    },
  });
  await app.register(k8sRoutes({ cluster: loadK8sCluster(env, { now: () => NOW, ...options }), requirePermission }), {
    prefix: '/api/v1/k8s',
  });
  await app.ready();
  const console: Console = {
    app,
    logs,
    async get(url, permissions = 'dashboard:read') {
      const response = await app.inject({ method: 'GET', url, headers: permissions === '' ? {} : { 'x-test-permissions': permissions } });
      return { status: response.statusCode, body: response.json(), text: response.body };
    },
  };
  consoles.push(console);
  return console;
}

// ---------------------------------------------------------------------------------------------

describe('kubernetes quantities', () => {
  test('parse to base units, millicores and bytes', () => {
    assert.equal(cpuMillicores('250m'), 250);
    assert.equal(cpuMillicores('4'), 4000);
    assert.equal(cpuMillicores('7910m'), 7910);
    assert.equal(cpuMillicores('0.5'), 500);
    assert.equal(cpuMillicores('412346789n'), 412);
    assert.equal(cpuMillicores('1500000u'), 1500);
    assert.equal(wholeUnits('3880Mi'), 3880 * 1024 * 1024);
    assert.equal(wholeUnits('16Gi'), 16 * 1024 ** 3);
    assert.equal(wholeUnits('16268516Ki'), 16268516 * 1024);
    assert.equal(wholeUnits('128974848'), 128974848);
    assert.equal(wholeUnits('129e6'), 129_000_000);
    assert.equal(wholeUnits('1.5G'), 1_500_000_000);
    assert.equal(wholeUnits('110'), 110);
    assert.equal(parseQuantity('1k'), 1000);
    for (const bad of ['', 'abc', '12Qi', '1.2.3', 'Mi', '5 Mi', '--1']) assert.equal(parseQuantity(bad), undefined, bad);
    assert.equal(cpuMillicores(undefined), undefined);
  });
});

describe('kubernetes view rules', () => {
  const pod = (status: object, metadata: object = {}) => ({ metadata: { name: 'p', namespace: 'ns', ...metadata }, status }) as V1Pod;
  const terminated = (exitCode: number, extra: object = {}) => ({ state: { terminated: { exitCode, ...extra } } });

  test('pod STATUS reads as kubectl prints it', () => {
    const cases: [V1Pod, string][] = [
      [
        pod({
          phase: 'Pending',
          containerStatuses: [{ name: 'a', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }],
        }),
        'ContainerCreating',
      ],
      [
        pod({
          phase: 'Pending',
          initContainerStatuses: [
            { name: 'i1', ...terminated(0, { reason: 'Completed' }) },
            { name: 'i2', state: { running: {} } },
          ],
        }),
        'Init:1/2',
      ],
      [
        pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', state: { waiting: { reason: 'CrashLoopBackOff' } } }] }),
        'Init:CrashLoopBackOff',
      ],
      [pod({ phase: 'Pending', initContainerStatuses: [{ name: 'i1', ...terminated(1, { reason: 'Error' }) }] }), 'Init:Error'],
      [pod({ phase: 'Running', containerStatuses: [{ name: 'a', ...terminated(2) }] }), 'ExitCode:2'],
      [pod({ phase: 'Running', containerStatuses: [{ name: 'a', ...terminated(137, { signal: 9 }) }] }), 'Signal:9'],
      [pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }), 'Evicted'],
      [
        pod({
          phase: 'Running',
          containerStatuses: [
            { name: 'a', ready: true, state: { running: {} } },
            { name: 'b', ...terminated(0, { reason: 'Completed' }) },
          ],
        }),
        'Running',
      ],
      [
        pod(
          { phase: 'Running', containerStatuses: [{ name: 'a', ready: true, state: { running: {} } }] },
          { deletionTimestamp: new Date() },
        ),
        'Terminating',
      ],
      [pod({}), 'Unknown'],
    ];
    for (const [input, expected] of cases) assert.equal(podDisplayStatus(input), expected, JSON.stringify(input.status));
  });

  test('health status and the problem list', () => {
    const version = { gitVersion: 'v1.30.1', platform: 'linux/arm64' } as VersionInfo;
    const node = (name: string, ready: string) =>
      ({ metadata: { name }, status: { conditions: [{ type: 'Ready', status: ready }] } }) as V1Node;
    const healthy = clusterHealth(
      version,
      [node('a', 'True')],
      [pod({ phase: 'Succeeded', containerStatuses: [{ name: 'x', ...terminated(0, { reason: 'Completed' }) }] })],
      NOW,
    );
    assert.deepEqual([healthy.status, healthy.problemCount, healthy.pods.succeeded], ['healthy', 0, 1]);
    assert.equal(clusterHealth(version, [], [], NOW).status, 'unhealthy', 'no nodes at all');
    const down = clusterHealth(version, [node('a', 'Unknown'), { metadata: { name: 'b' }, status: {} }], [], NOW);
    assert.equal(down.status, 'unhealthy');
    assert.deepEqual(
      down.problems.map((problem) => [problem.name, problem.reason, problem.severity]),
      [
        ['a', 'NotReady', 'critical'],
        ['b', 'NotReady', 'critical'],
      ],
    );
    assert.equal(down.problems[1]!.message, 'the node reports no Ready condition');
    const crashing = Array.from({ length: 150 }, (_, index) =>
      pod(
        {
          phase: 'Running',
          containerStatuses: [{ name: 'c', restartCount: index, state: { waiting: { reason: 'ImagePullBackOff' } } }],
        },
        { name: `p${index}` },
      ),
    );
    const failed = pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }, { name: 'evicted' });
    const many = clusterHealth(version, [node('a', 'True'), node('z', 'False')], [...crashing, failed], NOW);
    assert.equal(many.status, 'degraded');
    assert.equal(many.problemCount, 152);
    assert.equal(many.problems.length, MAX_PROBLEMS);
    assert.deepEqual(many.problems[0], {
      severity: 'critical',
      kind: 'Node',
      name: 'z',
      namespace: null,
      reason: 'NotReady',
      message: 'the node reports no Ready condition',
    });
    assert.equal(many.problems[1]!.reason, 'ImagePullBackOff');
    const evicted = clusterHealth(version, [node('a', 'True')], [failed], NOW).problems[0]!;
    assert.deepEqual([evicted.reason, evicted.message], ['Failed', 'The node was low on resource: memory.']);
  });
});

describe('kubernetes configuration', () => {
  test('not configured, disabled, or configured from KUBECONFIG', () => {
    assert.equal(loadK8sCluster({}), undefined);
    assert.equal(loadK8sCluster({ K8S_ENABLED: 'false', KUBECONFIG: writeKubeconfig('http://127.0.0.1:9') }), undefined);
    assert.equal(loadK8sCluster({ KUBECONFIG: writeKubeconfig('http://127.0.0.1:9') })?.source, 'kubeconfig');
  });

  test('bad settings stop the start with the variable named', () => {
    const error = (env: Env) => {
      try {
        loadK8sCluster(env);
      } catch (caught) {
        assert.ok(caught instanceof ConfigError, String(caught));
        return caught.message;
      }
      assert.fail('no configuration error');
    };
    assert.match(error({ K8S_ENABLED: 'true' }), /K8S_ENABLED is true but neither KUBECONFIG/);
    assert.match(error({ K8S_ENABLED: 'maybe' }), /K8S_ENABLED must be true or false/);
    assert.match(error({ KUBECONFIG: join(dir, 'missing') }), /KUBECONFIG must name a readable kubeconfig file/);
    assert.match(error({ KUBECONFIG: writeKubeconfig('http://127.0.0.1:9'), K8S_TIMEOUT: 'soon' }), /K8S_TIMEOUT must be a duration/);
    assert.match(error({ KUBECONFIG: writeKubeconfig('http://127.0.0.1:9'), K8S_TIMEOUT: '0' }), /K8S_TIMEOUT must be greater than 0/);
    assert.match(error({ KUBECONFIG: writeKubeconfig('http://127.0.0.1:9'), K8S_CONTEXT: 'other' }), /K8S_CONTEXT names no context/);
    const broken = join(dir, 'broken-kubeconfig');
    writeFileSync(broken, `clusters: [oops\ntoken: ${TOKEN}\n`);
    const message = error({ KUBECONFIG: broken });
    assert.match(message, /KUBECONFIG/);
    assert.ok(!message.includes(TOKEN), 'the file content is not quoted');
  });
});

describe('kubernetes views against the recorded API server', () => {
  let api: FakeApiServer;
  let k8s: Console;

  before(async () => {
    api = await startFakeApiServer();
    k8s = await startConsole({ KUBECONFIG: writeKubeconfig(api.url) });
  });

  after(async () => {
    for (const { app, logs } of consoles) {
      await app.close();
      assert.ok(!logs.join('\n').includes(TOKEN), 'the bearer token is never logged');
    }
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every view needs dashboard:read: 401 without credentials, 403 without the permission', async () => {
    for (const url of ['/api/v1/k8s/cluster/health', '/api/v1/k8s/nodes', '/api/v1/k8s/pods']) {
      const anonymous = await k8s.get(url, '');
      assert.equal(anonymous.status, 401, url);
      assert.deepEqual(anonymous.body, { error: 'missing bearer token' });
      const other = await k8s.get(url, 'logs:read,alerts:read');
      assert.equal(other.status, 403, url);
      assert.deepEqual(other.body, { error: 'permission denied' });
    }
    assert.equal(api.requests.length, 0, 'a refused caller causes no call to the cluster');
  });

  test('the OpenAPI description documents each view with its response body and errors', () => {
    const document = k8s.app.swagger() as {
      paths: Record<
        string,
        { get: { responses: Record<string, { content: Record<string, { schema: any }> }>; parameters?: { name: string }[] } }
      >;
    };
    const health = document.paths['/api/v1/k8s/cluster/health']!.get;
    assert.deepEqual(Object.keys(health.responses).sort(), ['200', '401', '403', '502', '503']);
    assert.ok(health.responses['200']!.content['application/json']!.schema.properties.problems);
    const nodes = document.paths['/api/v1/k8s/nodes']!.get;
    assert.ok(nodes.responses['200']!.content['application/json']!.schema.properties.items.items.properties.usage);
    const pods = document.paths['/api/v1/k8s/pods']!.get;
    assert.deepEqual(pods.parameters!.map((parameter) => parameter.name).sort(), ['continue', 'labelSelector', 'limit', 'namespace']);
    assert.ok(pods.responses['400'] && pods.responses['410']);
  });

  test('cluster health: version, node and pod counts, problems most severe first', async () => {
    const { status, body } = await k8s.get('/api/v1/k8s/cluster/health');
    assert.equal(status, 200);
    assert.equal(body.status, 'degraded');
    assert.equal(body.checkedAt, '2024-05-14T08:21:00.000Z');
    assert.deepEqual(body.apiServer, { reachable: true, version: 'v1.29.4', platform: 'linux/amd64' });
    assert.deepEqual(body.nodes, { total: 3, ready: 2, notReady: 1 });
    assert.deepEqual(body.pods, { total: 7, running: 5, pending: 1, succeeded: 1, failed: 0, unknown: 0 });
    assert.equal(body.problemCount, 4);
    assert.deepEqual(
      body.problems.map((p: any) => [p.severity, p.kind, p.namespace, p.name, p.reason]),
      [
        ['critical', 'Node', null, 'worker-2', 'NotReady'],
        ['warning', 'Node', null, 'worker-2', 'MemoryPressure'],
        ['warning', 'Pod', 'payments', 'payments-api-5f6d8c7b9-q7w2x', 'CrashLoopBackOff'],
        ['warning', 'Pod', 'payments', 'payments-worker-6c8d9f7b5-zz9lm', 'Unschedulable'],
      ],
    );
    assert.match(body.problems[0].message, /PLEG is not healthy/);
    assert.equal(body.problems[2].message, 'container api: 14 restarts, last terminated: OOMKilled (exit code 137)');
    assert.match(body.problems[3].message, /Insufficient memory/);
    const token = api.requests.find((request) => request.url.startsWith('/version'));
    assert.equal(token?.authorization, `Bearer ${TOKEN}`, 'the kubeconfig token is sent to the API server');
  });

  test('cluster health pages through every pod with limit and continue', async () => {
    api.requests.length = 0;
    const paged = await startConsole({ KUBECONFIG: writeKubeconfig(api.url) }, { pageSize: 3 });
    const { body } = await paged.get('/api/v1/k8s/cluster/health');
    assert.equal(body.pods.total, 7);
    assert.equal(body.problemCount, 4);
    const podCalls = api.requests.filter((request) => request.url.startsWith('/api/v1/pods'));
    assert.equal(podCalls.length, 3, 'pages of 3, 3 and 1');
    assert.ok(podCalls.every((call) => /limit=3/.test(call.url)));
    assert.ok(podCalls.slice(1).every((call) => /continue=/.test(call.url)));
  });

  test('nodes with conditions, capacity, allocatable and metrics-server usage', async () => {
    api.metrics = 'ok';
    const { status, body } = await k8s.get('/api/v1/k8s/nodes');
    assert.equal(status, 200);
    assert.equal(body.metricsAvailable, true);
    assert.deepEqual(
      body.items.map((node: any) => [node.name, node.roles, node.status, node.ready]),
      [
        ['cp-1', ['control-plane'], 'Ready', true],
        ['worker-1', ['worker'], 'Ready', true],
        ['worker-2', ['worker'], 'NotReady', false],
      ],
    );
    const [cp, worker1, worker2] = body.items;
    assert.deepEqual(cp.capacity, { cpuMillicores: 4000, memoryBytes: 16370916 * 1024, pods: 110 });
    assert.deepEqual(worker1.allocatable, { cpuMillicores: 7910, memoryBytes: 31716392 * 1024, pods: 110 });
    assert.deepEqual(cp.usage, {
      cpuMillicores: 412,
      memoryBytes: 3880 * 1024 * 1024,
      cpuPercent: 10.3,
      memoryPercent: 24.4,
      timestamp: '2024-05-14T08:20:52.000Z',
      window: '20.047s',
    });
    assert.equal(worker1.usage.cpuMillicores, 2517);
    assert.equal(worker1.usage.cpuPercent, 31.8);
    assert.equal(worker2.usage, undefined, 'metrics-server reports no usage for a NotReady node');
    assert.equal(cp.kubeletVersion, 'v1.29.4');
    assert.equal(cp.containerRuntime, 'containerd://1.7.13');
    assert.equal(cp.createdAt, '2024-02-03T09:12:44.000Z');
    assert.equal(cp.ageSeconds, Math.floor((NOW - Date.parse('2024-02-03T09:12:44Z')) / 1000));
    const pressure = worker2.conditions.find((condition: any) => condition.type === 'MemoryPressure');
    assert.deepEqual(pressure, {
      type: 'MemoryPressure',
      status: 'True',
      reason: 'KubeletHasInsufficientMemory',
      message: 'kubelet has insufficient memory available',
      lastTransitionTime: '2024-05-14T08:09:52.000Z',
    });
    assert.equal(worker2.unschedulable, false);
  });

  test('nodes without metrics-server: still 200, usage absent', async () => {
    api.metrics = 'missing';
    try {
      const { status, body } = await k8s.get('/api/v1/k8s/nodes');
      assert.equal(status, 200);
      assert.equal(body.metricsAvailable, false);
      assert.equal(body.items.length, 3);
      for (const node of body.items) assert.equal('usage' in node, false, node.name);
      assert.ok(
        api.requests.some((request) => request.url === '/apis/metrics.k8s.io/v1beta1/nodes'),
        'metrics were asked for',
      );
    } finally {
      api.metrics = 'ok';
    }
  });

  test('pods in every namespace, with phase, readiness, restarts and container states', async () => {
    const { status, body } = await k8s.get('/api/v1/k8s/pods');
    assert.equal(status, 200);
    assert.equal(body.continue, null);
    assert.equal(body.items.length, 7);
    const byName = new Map<string, any>(body.items.map((pod: any) => [pod.name, pod]));
    const crashing = byName.get('payments-api-5f6d8c7b9-q7w2x');
    assert.deepEqual(
      [
        crashing.namespace,
        crashing.phase,
        crashing.status,
        crashing.readyContainers,
        crashing.totalContainers,
        crashing.restarts,
        crashing.node,
      ],
      ['payments', 'Running', 'CrashLoopBackOff', 0, 1, 14, 'worker-1'],
    );
    assert.deepEqual(crashing.containers[0], {
      name: 'api',
      image: 'registry.example.go.id/payments/api:2.14.3',
      ready: false,
      restarts: 14,
      state: 'waiting',
      reason: 'CrashLoopBackOff',
      message:
        'back-off 5m0s restarting failed container=api pod=payments-api-5f6d8c7b9-q7w2x_payments(1c2d3e4f-5061-4728-93a4-b5c6d7e8f90a)',
      exitCode: null,
      startedAt: null,
      lastTermination: { reason: 'OOMKilled', exitCode: 137, finishedAt: '2024-05-14T08:17:02.000Z' },
    });
    assert.equal(crashing.ageSeconds, Math.floor((NOW - Date.parse('2024-05-14T06:58:41Z')) / 1000));
    const pending = byName.get('payments-worker-6c8d9f7b5-zz9lm');
    assert.deepEqual(
      [pending.phase, pending.status, pending.node, pending.readyContainers, pending.totalContainers],
      ['Pending', 'Pending', null, 0, 1],
    );
    assert.equal(pending.containers[0].state, 'unknown');
    const web = byName.get('web-7d9c6b8f5-x2k8p');
    assert.deepEqual([web.status, web.readyContainers, web.totalContainers, web.restarts], ['Running', 2, 2, 1]);
    assert.deepEqual(
      web.containers.map((container: any) => container.name),
      ['nginx', 'log-shipper'],
      'containers in spec order',
    );
    const job = byName.get('nightly-report-28596480-7kq2d');
    assert.deepEqual(
      [job.phase, job.status, job.containers[0].state, job.containers[0].exitCode],
      ['Succeeded', 'Completed', 'terminated', 0],
    );
  });

  test('pods of one namespace, by label selector, paginated', async () => {
    api.requests.length = 0;
    const payments = await k8s.get('/api/v1/k8s/pods?namespace=payments');
    assert.equal(payments.status, 200);
    assert.deepEqual(payments.body.items.map((pod: any) => pod.name).sort(), [
      'payments-api-5f6d8c7b9-m3n4b',
      'payments-api-5f6d8c7b9-q7w2x',
      'payments-worker-6c8d9f7b5-zz9lm',
    ]);
    assert.ok(
      api.requests.every((request) => request.url.startsWith('/api/v1/namespaces/payments/pods')),
      'asked the namespaced path',
    );

    const selected = await k8s.get(`/api/v1/k8s/pods?namespace=payments&labelSelector=${encodeURIComponent('app=payments-api')}`);
    assert.deepEqual(selected.body.items.map((pod: any) => pod.name).sort(), [
      'payments-api-5f6d8c7b9-m3n4b',
      'payments-api-5f6d8c7b9-q7w2x',
    ]);

    const first = await k8s.get('/api/v1/k8s/pods?limit=4');
    assert.equal(first.body.items.length, 4);
    assert.equal(typeof first.body.continue, 'string');
    const second = await k8s.get(`/api/v1/k8s/pods?limit=4&continue=${encodeURIComponent(first.body.continue)}`);
    assert.equal(second.body.items.length, 3);
    assert.equal(second.body.continue, null);
    const names = [...first.body.items, ...second.body.items].map((pod: any) => pod.name);
    assert.equal(new Set(names).size, 7, 'the two pages cover every pod once');

    const none = await k8s.get('/api/v1/k8s/pods?namespace=empty-namespace');
    assert.deepEqual([none.status, none.body.items], [200, []]);
  });

  test('bad pod queries are 400 (or 410 for an expired continue token) and do not reach the cluster when we can tell', async () => {
    api.requests.length = 0;
    for (const query of ['namespace=Payments_NS', 'limit=0', 'limit=1001', 'limit=ten', `namespace=${'a'.repeat(64)}`]) {
      const response = await k8s.get(`/api/v1/k8s/pods?${query}`);
      assert.equal(response.status, 400, query);
      assert.equal(typeof response.body.error, 'string');
    }
    assert.equal(api.requests.length, 0);
    const selector = await k8s.get(`/api/v1/k8s/pods?labelSelector=${encodeURIComponent('app in (a')}`);
    assert.deepEqual([selector.status, selector.body], [400, { error: 'invalid label selector' }]);
    const expired = await k8s.get('/api/v1/k8s/pods?continue=expired-token');
    assert.deepEqual([expired.status, expired.body], [410, { error: 'continue token expired' }]);
  });

  test('not configured: 503 on every view, after the permission check', async () => {
    const none = await startConsole({});
    for (const url of ['/api/v1/k8s/cluster/health', '/api/v1/k8s/nodes', '/api/v1/k8s/pods']) {
      const response = await none.get(url);
      assert.deepEqual([response.status, response.body], [503, { error: 'kubernetes not configured' }], url);
      assert.equal((await none.get(url, '')).status, 401);
    }
    const disabled = await startConsole({ K8S_ENABLED: 'false', KUBECONFIG: writeKubeconfig(api.url) });
    assert.equal((await disabled.get('/api/v1/k8s/nodes')).status, 503);
  });

  test('API server unreachable (nothing listens): 502 without the address', async () => {
    const closed = await startFakeApiServer();
    const address = closed.url;
    await closed.close();
    const k8sDown = await startConsole({ KUBECONFIG: writeKubeconfig(address) });
    for (const url of ['/api/v1/k8s/cluster/health', '/api/v1/k8s/nodes', '/api/v1/k8s/pods']) {
      const response = await k8sDown.get(url);
      assert.deepEqual([response.status, response.body], [502, { error: 'kubernetes api unreachable' }], url);
      assert.ok(!response.text.includes('127.0.0.1') && !response.text.includes(TOKEN));
    }
    assert.ok(
      k8sDown.logs.some((line) => line.includes('request failed')),
      'the cause is logged for the operator',
    );
  });

  test('API server that never answers: 502 once K8S_TIMEOUT passes', { timeout: 15_000 }, async () => {
    const silent = await startFakeApiServer({ hang: true });
    try {
      const k8sSlow = await startConsole({ KUBECONFIG: writeKubeconfig(silent.url), K8S_TIMEOUT: '150ms' });
      const health = await k8sSlow.get('/api/v1/k8s/cluster/health');
      assert.deepEqual([health.status, health.body], [502, { error: 'kubernetes api unreachable' }]);
      const pods = await k8sSlow.get('/api/v1/k8s/pods?namespace=payments');
      assert.deepEqual([pods.status, pods.body], [502, { error: 'kubernetes api unreachable' }]);
      assert.ok(silent.requests.length >= 2, 'the requests did reach the silent server');
      assert.equal(silent.requests[0]!.authorization, `Bearer ${TOKEN}`);
    } finally {
      await silent.close();
    }
  });

  test('HTTPS API server: verified against the kubeconfig CA, refused without it', async () => {
    const secure = await startFakeApiServer({ tls: true });
    try {
      const trusted = await startConsole({ KUBECONFIG: writeKubeconfig(secure.url, TOKEN, 'test-ca') });
      const nodes = await trusted.get('/api/v1/k8s/nodes');
      assert.equal(nodes.status, 200);
      assert.equal(nodes.body.items.length, 3);
      assert.equal(secure.requests[0]!.authorization, `Bearer ${TOKEN}`);
      const untrusted = await startConsole({ KUBECONFIG: writeKubeconfig(secure.url, TOKEN, 'system') });
      const refused = await untrusted.get('/api/v1/k8s/nodes');
      assert.deepEqual([refused.status, refused.body], [502, { error: 'kubernetes api unreachable' }], 'an unknown CA is not trusted');
    } finally {
      await secure.close();
    }
  });

  test('in a pod: the service account token and cluster CA, from KUBERNETES_SERVICE_HOST/PORT', async () => {
    const secure = await startFakeApiServer({ tls: true });
    try {
      const serviceAccountDir = join(dir, 'serviceaccount');
      mkdirSync(serviceAccountDir);
      writeFileSync(join(serviceAccountDir, 'token'), TOKEN);
      writeFileSync(join(serviceAccountDir, 'ca.crt'), tlsFile('ca.crt'));
      writeFileSync(join(serviceAccountDir, 'namespace'), 'monitoring');
      const port = new URL(secure.url).port;
      const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port };
      assert.equal(loadK8sCluster(env, { serviceAccountDir: join(dir, 'no-such-dir') }), undefined, 'no mounted token: not configured');
      assert.equal(loadK8sCluster(env, { serviceAccountDir })?.source, 'in-cluster');
      const inPod = await startConsole(env, { serviceAccountDir });
      const health = await inPod.get('/api/v1/k8s/cluster/health');
      assert.equal(health.status, 200);
      assert.equal(health.body.nodes.total, 3);
      assert.ok(secure.requests.every((request) => request.authorization === `Bearer ${TOKEN}`));
      const kubeconfigWins = await startConsole({ ...env, KUBECONFIG: writeKubeconfig(api.url) }, { serviceAccountDir });
      assert.equal((await kubeconfigWins.get('/api/v1/k8s/nodes')).status, 200);
      assert.equal(
        secure.requests.filter((request) => request.url.startsWith('/api/v1/nodes')).length,
        1,
        'KUBECONFIG was used, not the pod account',
      );
    } finally {
      await secure.close();
    }
  });

  test('API server refusing the credentials: 502, and the token never appears in a response', async () => {
    const wrong = await startConsole({ KUBECONFIG: writeKubeconfig(api.url, 'not-the-token') });
    for (const url of ['/api/v1/k8s/cluster/health', '/api/v1/k8s/nodes', '/api/v1/k8s/pods']) {
      const response = await wrong.get(url);
      assert.deepEqual([response.status, response.body], [502, { error: 'kubernetes api error' }], url);
      assert.ok(!response.text.includes('not-the-token'));
    }
    for (const url of ['/api/v1/k8s/cluster/health', '/api/v1/k8s/nodes', '/api/v1/k8s/pods?namespace=payments']) {
      const response = await k8s.get(url);
      assert.equal(response.status, 200);
      assert.ok(!response.text.includes(TOKEN), `${url} does not echo the token`);
    }
  });
});
