import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { loadGatewayConfig } from '../../src/gateway/config.js';
import { loadLogsConfig } from '../../src/logs/config.js';
import { LOGS_NODE_OPTIONS } from '../../src/logs/node-options.js';
import { startTestGateway } from '../helpers/gateway.js';
import { listenOnLoopback } from '../helpers/listen.js';
import { startTestLogs } from '../helpers/logs.js';
import { closedPort } from '../helpers/upstream.js';
import { nodeArgs } from '../helpers/node-args.js';

/**
 * The deployable artefacts (Dockerfile, compose.yaml, deploy/k8s) cannot be run here (no container
 * engine, no cluster), so this checks what can be checked: every command is a CLI command, every
 * variable is one a config loader reads, every port is the port the service listens on with those
 * settings, every probe path answers, and the image's files exist. docs/operations.md.
 */
type Service = 'gateway' | 'logs';

/** The image every artefact runs: pinned to the release (package.json), never `latest`. */
const IMAGE = `gerbang:${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version}`;

/**
 * The graceful stop's settings (docs/operations.md, "Kubernetes"), read by the shutdown code rather than
 * the config loaders; checked here by name and value.
 */
const SHUTDOWN_SETTINGS = new Set(['SHUTDOWN_READINESS_DELAY', 'SHUTDOWN_DRAIN_TIMEOUT']);

/** Seconds of a duration setting (`30s`, `500ms`, `1m`) or of a compose/Kubernetes duration. */
function seconds(value: string | number | undefined): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value ?? '');
  assert.ok(match, `a duration: ${value}`);
  return Number(match[1]) * { ms: 0.001, s: 1, m: 60 }[(match[2] ?? 's') as 'ms' | 's' | 'm'];
}

/**
 * What a stop costs: a preStop sleep, then the app's readiness delay (it keeps serving while the
 * endpoints drop it), then its drain. Exactly one of the sleep and the delay covers the endpoints'
 * delay: both would wait twice, neither would send requests to a closed port.
 */
function stopBudget(where: string, env: Record<string, string>, preStopSleep: number): number {
  for (const name of SHUTDOWN_SETTINGS) assert.ok(name in env, `${where}: ${name} is set`);
  const delay = seconds(env.SHUTDOWN_READINESS_DELAY);
  const drain = seconds(env.SHUTDOWN_DRAIN_TIMEOUT);
  assert.equal(drain, 30, `${where}: a 30 s drain`);
  assert.ok(delay > 0 !== preStopSleep > 0, `${where}: the readiness delay or a preStop sleep, one of them`);
  assert.equal(delay + preStopSleep, 5, `${where}: 5 s for the endpoints to drop the pod`);
  return preStopSleep + delay + drain;
}
const LOADERS: Record<Service, (env: Record<string, string | undefined>) => { port: number }> = {
  gateway: loadGatewayConfig,
  logs: loadLogsConfig,
};

/** The variables a loader reads with these settings (the values steer which optional ones it reads). */
function variablesRead(service: Service, env: Record<string, string>): Set<string> {
  const seen = new Set<string>();
  const recorder = new Proxy(env, {
    get(target, name) {
      if (typeof name === 'string') seen.add(name);
      return target[name as string];
    },
  });
  LOADERS[service](recorder);
  return seen;
}

function cliKnows(command: string): boolean {
  return spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'help', command], { encoding: 'utf8' }).status === 0;
}

/** compose.yaml's `${NAME:?...}` and `${NAME:-default}` with sample values. */
function interpolated(value: string): string {
  return value.replace(/\$\{([A-Z_]+)(:[-?][^}]*)?\}/g, (_match, name: string, modifier: string | undefined) =>
    modifier?.startsWith(':-')
      ? modifier.slice(2)
      : name.endsWith('PASSWORD')
        ? 'Sample-Passw0rd!'
        : `sample-${name.toLowerCase()}-0123456789abcdef0123456789`,
  );
}

interface Container {
  where: string;
  service: Service;
  env: Record<string, string>;
  ports: number[];
  probes: string[];
}

/** compose.yaml (one of each) and compose.cluster.yaml (two of each behind nginx). */
const COMPOSE_FILES = ['compose.yaml', 'compose.cluster.yaml'];

function composeServices(file: string): Record<string, any> {
  return (parse(readFileSync(file, 'utf8'), { merge: true }) as { services: Record<string, any> }).services;
}

function composeContainers(file: string): Container[] {
  return Object.entries(composeServices(file))
    .filter(([, spec]) => String(spec.image).startsWith('gerbang:'))
    .map(([name, spec]) => {
      assert.equal(spec.image, IMAGE, `compose ${name}: the pinned image`);
      const command = (spec.command as string[])[0] as Service;
      assert.ok(cliKnows(command), `compose ${name}: command ${command}`);
      assert.deepEqual(spec.healthcheck.test.slice(0, 3), ['CMD', 'node', 'scripts/healthcheck.mjs'], `compose ${name}: health check`);
      return {
        where: `${file} ${name}`,
        service: command,
        env: Object.fromEntries(
          Object.entries(spec.environment as Record<string, string>).map(([key, value]) => [key, interpolated(String(value))]),
        ),
        // Published (compose.yaml) or reachable through nginx only (compose.cluster.yaml).
        ports: ((spec.ports ?? spec.expose) as string[]).map((mapping) => Number(mapping.split(':').at(-1))),
        probes: spec.healthcheck.test.slice(3).map((port: string) => `:${port}/healthz`),
      };
    });
}

const yamlDocuments = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((document) => document.toJS() as any);

/**
 * Kubernetes' strategic merge patch as kustomize applies the SQLite overlay's patches: objects merge
 * by key, `null` removes a field, lists of objects merge by `name` (`mountPath` for volume mounts)
 * and `$patch: delete` removes an item.
 */
function strategicMerge(target: any, patch: any): any {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const merged = { ...(target ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else if (Array.isArray(value)) {
      const by = key === 'volumeMounts' ? 'mountPath' : 'name';
      const list = [...((merged[key] as any[] | undefined) ?? [])];
      for (const item of value) {
        const at = list.findIndex((existing) => existing[by] === item[by]);
        if (item.$patch === 'delete') {
          assert.ok(at >= 0, `a patch deletes ${key} ${item[by]}, which the base has`);
          list.splice(at, 1);
        } else if (at >= 0) list[at] = strategicMerge(list[at], item);
        else list.push(item);
      }
      merged[key] = list;
    } else merged[key] = strategicMerge(merged[key], value);
  }
  return merged;
}

/**
 * The manifests `kubectl apply -k` would apply: deploy/k8s (PostgreSQL, two of each) and
 * deploy/k8s/sqlite (the same with the overlay's patches and volumes).
 */
function kubernetesManifests(variant: 'postgres' | 'sqlite'): any[] {
  const base = parse(readFileSync('deploy/k8s/kustomization.yaml', 'utf8')) as { resources: string[] };
  const manifests = base.resources.flatMap((file) => yamlDocuments(join('deploy/k8s', file)));
  if (variant === 'postgres') return manifests;
  const overlay = parse(readFileSync('deploy/k8s/sqlite/kustomization.yaml', 'utf8')) as {
    resources: string[];
    patches: { path: string }[];
  };
  const [parent, ...own] = overlay.resources;
  assert.equal(parent, '..', 'the SQLite overlay patches the PostgreSQL manifests');
  const patched = manifests.map((manifest) => {
    const patches = overlay.patches
      .flatMap(({ path }) => yamlDocuments(join('deploy/k8s/sqlite', path)))
      .filter((patch) => patch.kind === manifest.kind && patch.metadata.name === manifest.metadata.name);
    return patches.reduce((merged, patch) => strategicMerge(merged, patch), manifest);
  });
  return [...patched, ...own.flatMap((file) => yamlDocuments(join('deploy/k8s/sqlite', file)))];
}

function kubernetesContainers(variant: 'postgres' | 'sqlite' = 'postgres'): Container[] {
  const secret = parse(readFileSync('deploy/k8s/secret.example.yaml', 'utf8')) as { stringData: Record<string, string> };
  const containers: Container[] = [];
  const file = variant === 'postgres' ? 'deploy/k8s' : 'deploy/k8s/sqlite';
  for (const manifest of kubernetesManifests(variant)) {
    if (manifest.kind === 'Service') {
      for (const port of manifest.spec.ports) assert.equal(port.targetPort, 'http', `${file}: Services target the named port`);
    }
    if (manifest.kind !== 'Deployment') continue;
    const pod = manifest.spec.template.spec;
    for (const container of pod.containers) {
      const command = container.args[0] as Service;
      assert.ok(cliKnows(command), `${file}: args ${command}`);
      const env: Record<string, string> = {};
      for (const variable of container.env) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref) assert.ok(ref.key in secret.stringData, `${file}: ${variable.name} from a key the example secret has`);
        env[variable.name] = ref ? secret.stringData[ref.key]! : String(variable.value);
      }
      assert.equal(pod.securityContext.runAsNonRoot, true, `${file}: not as root`);
      assert.equal(container.image, IMAGE, `${file}: the pinned image`);
      containers.push({
        where: `${file} ${container.name}`,
        service: command,
        env,
        ports: container.ports.map((port: { containerPort: number }) => port.containerPort),
        probes: [container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path],
      });
    }
  }
  return containers;
}

describe('deployable artefacts', () => {
  test("compose and Kubernetes: CLI commands, variables the loaders read, the ports the services listen on, the logs service's node options", () => {
    const sources = [
      ...COMPOSE_FILES.map((file) => composeContainers(file)),
      kubernetesContainers('postgres'),
      kubernetesContainers('sqlite'),
    ];
    assert.deepEqual(
      sources.map((containers) => containers.map((container) => container.service).sort()),
      [
        ['gateway', 'logs'],
        ['gateway', 'gateway', 'logs', 'logs'],
        ['gateway', 'logs'],
        ['gateway', 'logs'],
      ],
      'compose: one of each, and two of each in the cluster variant; a Deployment of each in Kubernetes',
    );
    const containers = sources.flat();
    for (const container of containers) {
      // Node's own variable: the logs service's V8 options (src/logs/node-options.ts), which `all` gives its child itself.
      const { NODE_OPTIONS: nodeOptions, ...settings } = container.env;
      assert.equal(nodeOptions, container.service === 'logs' ? LOGS_NODE_OPTIONS.join(' ') : undefined, `${container.where}: NODE_OPTIONS`);
      const read = variablesRead(container.service, settings);
      for (const name of Object.keys(settings))
        assert.ok(read.has(name) || SHUTDOWN_SETTINGS.has(name), `${container.where}: ${name} is not a ${container.service} setting`);
      const config = LOADERS[container.service](settings);
      assert.deepEqual(container.ports, [config.port], `${container.where}: the port it listens on`);
    }
  });

  test('probe paths answer 200 on both services', async () => {
    const paths = new Set(kubernetesContainers().flatMap((container) => container.probes));
    assert.deepEqual([...paths].sort(), ['/healthz', '/readyz']);
    const logs = await startTestLogs('sqlite');
    const gateway = await startTestGateway('sqlite');
    try {
      for (const path of paths) {
        assert.equal((await logs.request({ method: 'GET', url: path })).statusCode, 200, `logs ${path}`);
        assert.equal((await gateway.request({ method: 'GET', url: path })).statusCode, 200, `gateway ${path}`);
      }
    } finally {
      await logs.close();
      await gateway.close();
    }
  });

  test('the health-check script passes for a listening service and fails for a closed port', async () => {
    const logs = await startTestLogs('sqlite');
    try {
      const port = await listenOnLoopback(logs.app);
      // Not spawnSync: the service answering lives in this process.
      const run = async (args: string[]) => {
        const child = spawn(process.execPath, ['scripts/healthcheck.mjs', ...args], { stdio: 'ignore' });
        const [code] = (await once(child, 'exit')) as [number | null];
        return code;
      };
      assert.equal(await run([String(port)]), 0);
      assert.equal(await run([String(port), String(await closedPort())]), 1);
    } finally {
      await logs.close();
    }
  });

  test('Kubernetes: a startup probe that outlasts migrations, a stop that fits its grace period, least privilege, a guarded /metrics (both variants)', () => {
    const secret = parse(readFileSync('deploy/k8s/secret.example.yaml', 'utf8')) as { stringData: Record<string, string> };
    const deployments = (['postgres', 'sqlite'] as const)
      .flatMap((variant) => kubernetesManifests(variant))
      .filter((manifest) => manifest.kind === 'Deployment');
    assert.deepEqual(deployments.map((deployment) => deployment.metadata.name).sort(), [
      'gerbang-gateway',
      'gerbang-gateway',
      'gerbang-logs',
      'gerbang-logs',
    ]);
    for (const deployment of deployments) {
      const where = deployment.metadata.name as string;
      const pod = deployment.spec.template.spec;
      assert.equal(pod.securityContext.runAsNonRoot, true, `${where}: not as root`);
      const tmpVolumes = new Set<string>(pod.volumes.filter((volume: any) => volume.emptyDir).map((volume: any) => volume.name));
      for (const container of pod.containers) {
        const env = Object.fromEntries(container.env.map((variable: any) => [variable.name, variable.value ?? variable.valueFrom]));
        // The port opens before long migrations: /healthz answers (alive), /readyz says `migrating`.
        const startup = container.startupProbe;
        assert.equal(startup?.httpGet?.path, '/healthz', `${where}: a startup probe on /healthz`);
        assert.ok(
          (startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3) >= 900,
          `${where}: 15 minutes to start (a long migration)`,
        );
        assert.equal(container.livenessProbe.httpGet.path, '/healthz', `${where}: liveness never asks about migrations`);
        const sleep = container.lifecycle?.preStop?.exec?.command;
        const preStopSleep = sleep ? seconds(/^sleep (\S+)$/.exec(sleep.join(' ').replace(/^\/bin\/sh -c /, ''))?.[1]) : 0;
        const budget = stopBudget(where, env, preStopSleep);
        assert.ok(pod.terminationGracePeriodSeconds > budget, `${where}: grace ${pod.terminationGracePeriodSeconds} s above ${budget} s`);
        const security = container.securityContext;
        assert.equal(security?.readOnlyRootFilesystem, true, `${where}: read-only root file system`);
        assert.equal(security.allowPrivilegeEscalation, false, `${where}: no privilege escalation`);
        assert.deepEqual(security.capabilities?.drop, ['ALL'], `${where}: no capabilities`);
        const tmp = container.volumeMounts?.find((mount: any) => mount.mountPath === '/tmp');
        assert.ok(tmp && tmpVolumes.has(tmp.name), `${where}: a writable /tmp (emptyDir) beside the read-only root`);
        const tokenVariable = where === 'gerbang-logs' ? 'LOGS_METRICS_TOKEN' : 'GATEWAY_METRICS_TOKEN';
        const token = env[tokenVariable]?.secretKeyRef?.key;
        assert.ok(token && secret.stringData[token], `${where}: /metrics behind ${tokenVariable}, from the secret`);
      }
    }
  });

  test('Kubernetes on PostgreSQL: two replicas of each, replaced one at a time, and a disruption budget that keeps one up', () => {
    const manifests = kubernetesManifests('postgres');
    for (const deployment of manifests.filter((manifest) => manifest.kind === 'Deployment')) {
      const where = deployment.metadata.name as string;
      assert.equal(deployment.spec.replicas, 2, `${where}: two replicas`);
      assert.deepEqual(
        deployment.spec.strategy,
        { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        `${where}: a new pod is ready before an old one stops`,
      );
      const budgets = manifests.filter(
        (manifest) =>
          manifest.kind === 'PodDisruptionBudget' &&
          Object.entries(manifest.spec.selector.matchLabels).every(
            ([label, value]) => deployment.spec.template.metadata.labels[label] === value,
          ),
      );
      assert.equal(budgets.length, 1, `${where}: one PodDisruptionBudget selects its pods`);
      assert.equal(budgets[0].apiVersion, 'policy/v1');
      assert.deepEqual(
        { maxUnavailable: budgets[0].spec.maxUnavailable, minAvailable: budgets[0].spec.minAvailable },
        { maxUnavailable: 1, minAvailable: undefined },
        `${where}: one pod evicted at a time (and a single replica, on SQLite, can still be drained)`,
      );
      for (const container of deployment.spec.template.spec.containers)
        assert.ok(
          container.env.some((variable: any) => /_DATABASE_URL$/.test(variable.name) && variable.valueFrom?.secretKeyRef),
          `${where}: its PostgreSQL URL from the secret`,
        );
    }
  });

  test('Kubernetes on SQLite (deploy/k8s/sqlite): one replica of each, Recreate, its database on a ReadWriteOnce volume at /data', () => {
    const manifests = kubernetesManifests('sqlite');
    const claims = new Map(
      manifests.filter((manifest) => manifest.kind === 'PersistentVolumeClaim').map((claim) => [claim.metadata.name as string, claim]),
    );
    const deployments = manifests.filter((manifest) => manifest.kind === 'Deployment');
    for (const deployment of deployments) {
      const where = deployment.metadata.name as string;
      assert.equal(deployment.spec.replicas, 1, `${where}: one replica (one process per SQLite database)`);
      assert.deepEqual(deployment.spec.strategy, { type: 'Recreate' }, `${where}: the old pod stops before the new one starts`);
      const pod = deployment.spec.template.spec;
      for (const container of pod.containers) {
        const env = new Map<string, any>(container.env.map((variable: any) => [variable.name, variable]));
        assert.equal(env.get('DATA_DIR')?.value, '/data', `${where}: DATA_DIR`);
        assert.ok(![...env.keys()].some((name) => name.endsWith('_DATABASE_URL')), `${where}: no PostgreSQL URL`);
        const config = LOADERS[container.args[0] as Service]({ DATA_DIR: '/data' }) as unknown as { databaseUrl: string };
        assert.match(config.databaseUrl, /^sqlite:\/data\//, `${where}: a SQLite file in /data`);
        const mount = container.volumeMounts.find((volumeMount: any) => volumeMount.mountPath === '/data');
        const volume = pod.volumes.find((candidate: any) => candidate.name === mount?.name);
        const claim = claims.get(volume?.persistentVolumeClaim?.claimName);
        assert.deepEqual(claim?.spec.accessModes, ['ReadWriteOnce'], `${where}: /data on a ReadWriteOnce claim of its own`);
      }
    }
    assert.equal(
      new Set(deployments.map((deployment) => deployment.spec.template.spec.volumes.at(-1).persistentVolumeClaim.claimName)).size,
      2,
    );
  });

  test('compose.cluster.yaml: two of each behind nginx, every instance in an upstream of deploy/compose/nginx.conf and nothing else published', () => {
    const services = composeServices('compose.cluster.yaml');
    const nginxConf = readFileSync('deploy/compose/nginx.conf', 'utf8');
    const upstreams = [...nginxConf.matchAll(/^\s*server ([a-z0-9-]+):(\d+)\b/gm)].map((match) => ({
      host: match[1]!,
      port: Number(match[2]),
    }));
    const ours = Object.entries(services).filter(([, spec]) => String(spec.image).startsWith('gerbang:'));
    assert.deepEqual(ours.map(([name]) => name).sort(), ['gateway-1', 'gateway-2', 'logs-1', 'logs-2']);
    assert.deepEqual(
      upstreams.map((upstream) => upstream.host).sort(),
      ['gateway-1', 'gateway-2', 'logs-1', 'logs-2'],
      'nginx names every instance',
    );
    for (const [name, spec] of ours) {
      const upstream = upstreams.find((candidate) => candidate.host === name)!;
      const config = LOADERS[spec.command[0] as Service](
        Object.fromEntries(
          Object.entries(spec.environment as Record<string, string>).map(([key, value]) => [key, interpolated(String(value))]),
        ),
      ) as unknown as { port: number; databaseUrl: string };
      assert.equal(config.port, upstream.port, `${name}: listens where nginx sends it`);
      assert.match(config.databaseUrl, /^postgres:\/\/[^@]+@postgres:5432\//, `${name}: on the compose PostgreSQL`);
      assert.equal(spec.ports, undefined, `${name}: reachable through nginx only (it trusts one hop for client addresses)`);
      assert.equal(
        spec.environment[spec.command[0] === 'gateway' ? 'GATEWAY_TRUST_PROXY' : 'LOGS_TRUST_PROXY'],
        '1',
        `${name}: trusts nginx`,
      );
    }
    const nginx = services.nginx;
    assert.ok(nginx.volumes.includes('./deploy/compose/nginx.conf:/etc/nginx/nginx.conf:ro'), 'nginx runs the tested config');
    const listens = [...nginxConf.matchAll(/^\s*listen (\d+);/gm)].map((match) => Number(match[1]));
    assert.deepEqual(nginx.ports.map((mapping: string) => Number(mapping.split(':').at(-1))).sort(), listens.sort());
    assert.doesNotMatch(nginxConf, /^\s*(ip_hash|hash|sticky|least_conn)\b/m, 'round robin, nothing sticky');
    assert.deepEqual([...(nginx.depends_on as string[])].sort(), ['gateway-1', 'gateway-2', 'logs-1', 'logs-2']);
  });

  test('compose (both files): a read-only root, no capabilities, no privilege gain, and a stop grace above the readiness delay and the drain', () => {
    const ours = COMPOSE_FILES.flatMap((file) =>
      Object.entries(composeServices(file))
        .filter(([, spec]) => String(spec.image).startsWith('gerbang:'))
        .map(([name, spec]) => [`${file} ${name}`, spec] as const),
    );
    assert.equal(ours.length, 6);
    for (const [name, spec] of ours) {
      assert.equal(spec.read_only, true, `${name}: read-only root`);
      assert.deepEqual(spec.tmpfs, ['/tmp'], `${name}: a writable /tmp`);
      assert.deepEqual(spec.cap_drop, ['ALL'], `${name}: no capabilities`);
      assert.ok(spec.security_opt.includes('no-new-privileges:true'), `${name}: no privilege gain`);
      const budget = stopBudget(name, spec.environment, 0);
      assert.ok(seconds(spec.stop_grace_period) > budget, `${name}: stop_grace_period above ${budget} s (Docker's default is 10 s)`);
    }
  });

  test('Dockerfile: sources that exist, the build output it runs, a non-root user, production dependencies, the default ports', () => {
    const lines = readFileSync('Dockerfile', 'utf8')
      .split('\n')
      .filter((line) => !line.startsWith('#'));
    const stages = lines
      .join('\n')
      .split(/^FROM /m)
      .slice(1);
    assert.equal(stages.length, 2, 'a build stage and a run stage');
    for (const line of lines.filter((line) => /^COPY (?!--from)/.test(line))) {
      for (const source of line.split(/\s+/).slice(1, -1)) assert.ok(existsSync(source), `COPY ${source}`);
    }
    const build = stages[0]!;
    const run = stages[1]!;
    assert.match(build, /npm ci /);
    assert.match(build, /npm run build && npm prune --omit=dev/);
    assert.doesNotMatch(run, /npm (ci|install)/, 'the run stage installs nothing');
    assert.match(run, /^USER node$/m);
    assert.match(run, /^ENTRYPOINT \["node", "dist\/cli\.js"\]$/m);
    const buildOptions = JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as {
      compilerOptions: { outDir: string; rootDir: string };
    };
    assert.deepEqual(
      [buildOptions.compilerOptions.rootDir, buildOptions.compilerOptions.outDir],
      ['src', 'dist'],
      'src/cli.ts is built to dist/cli.js',
    );
    const command = /^CMD \["([a-z-]+)"\]$/m.exec(run)?.[1];
    assert.ok(command && cliKnows(command), `CMD ${command}`);
    assert.match(run, /^HEALTHCHECK .*CMD \["node", "scripts\/healthcheck\.mjs"\]$/m);
    const exposed = /^EXPOSE (.+)$/m.exec(run)![1]!.split(/\s+/).map(Number);
    assert.deepEqual(exposed, [loadGatewayConfig({}).port, loadLogsConfig({}).port]);
  });
});
