import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

/**
 * The deployable artefacts (Dockerfile, compose.yaml, deploy/k8s) cannot be run here (no container
 * engine, no cluster), so this checks what can be checked: every command is a CLI command, every
 * variable is one a config loader reads, every port is the port the service listens on with those
 * settings, every probe path answers, and the image's files exist. docs/operations.md.
 */
type Service = 'gateway' | 'logs';
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
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'help', command], { encoding: 'utf8' }).status === 0;
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

function composeContainers(): Container[] {
  const compose = parse(readFileSync('compose.yaml', 'utf8')) as { services: Record<string, any> };
  return Object.entries(compose.services)
    .filter(([, spec]) => spec.image === 'gerbang:latest')
    .map(([name, spec]) => {
      const command = (spec.command as string[])[0] as Service;
      assert.ok(cliKnows(command), `compose ${name}: command ${command}`);
      assert.deepEqual(spec.healthcheck.test.slice(0, 3), ['CMD', 'node', 'scripts/healthcheck.mjs'], `compose ${name}: health check`);
      return {
        where: `compose ${name}`,
        service: command,
        env: Object.fromEntries(
          Object.entries(spec.environment as Record<string, string>).map(([key, value]) => [key, interpolated(String(value))]),
        ),
        ports: (spec.ports as string[]).map((mapping) => Number(mapping.split(':').at(-1))),
        probes: spec.healthcheck.test.slice(3).map((port: string) => `:${port}/healthz`),
      };
    });
}

function kubernetesContainers(): Container[] {
  const secret = parse(readFileSync('deploy/k8s/secret.example.yaml', 'utf8')) as { stringData: Record<string, string> };
  const containers: Container[] = [];
  for (const file of readdirSync('deploy/k8s').filter((name) => name.endsWith('.yaml'))) {
    for (const document of parseAllDocuments(readFileSync(join('deploy/k8s', file), 'utf8'))) {
      const manifest = document.toJS() as any;
      if (manifest.kind === 'Service') {
        for (const port of manifest.spec.ports) assert.equal(port.targetPort, 'http', `${file}: Services target the named port`);
      }
      if (manifest.kind !== 'Deployment') continue;
      for (const container of manifest.spec.template.spec.containers) {
        const command = container.args[0] as Service;
        assert.ok(cliKnows(command), `${file}: args ${command}`);
        const env: Record<string, string> = {};
        for (const variable of container.env) {
          const ref = variable.valueFrom?.secretKeyRef;
          if (ref) assert.ok(ref.key in secret.stringData, `${file}: ${variable.name} from a key the example secret has`);
          env[variable.name] = ref ? secret.stringData[ref.key]! : String(variable.value);
        }
        assert.equal(manifest.spec.template.spec.securityContext.runAsNonRoot, true, `${file}: not as root`);
        containers.push({
          where: `${file} ${container.name}`,
          service: command,
          env,
          ports: container.ports.map((port: { containerPort: number }) => port.containerPort),
          probes: [container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path],
        });
      }
    }
  }
  return containers;
}

describe('deployable artefacts', () => {
  test("compose and Kubernetes: CLI commands, variables the loaders read, the ports the services listen on, the logs service's node options", () => {
    const containers = [...composeContainers(), ...kubernetesContainers()];
    assert.deepEqual(containers.map((container) => container.service).sort(), ['gateway', 'gateway', 'logs', 'logs']);
    for (const container of containers) {
      // Node's own variable: the logs service's V8 options (src/logs/node-options.ts), which `all` gives its child itself.
      const { NODE_OPTIONS: nodeOptions, ...settings } = container.env;
      assert.equal(nodeOptions, container.service === 'logs' ? LOGS_NODE_OPTIONS.join(' ') : undefined, `${container.where}: NODE_OPTIONS`);
      const read = variablesRead(container.service, settings);
      for (const name of Object.keys(settings))
        assert.ok(read.has(name), `${container.where}: ${name} is not a ${container.service} setting`);
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
