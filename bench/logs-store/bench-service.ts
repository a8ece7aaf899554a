/**
 * The logs service as the HTTP benchmarks run it (bulk-http.ts, search-compat.ts): a child process
 * from source (tsx), production settings, a data directory of its own, the per-tenant and per-user
 * limits lifted and no second factor for its administrator; an API key made through its API; stopped
 * (and its data directory removed) by `stop`, or killed when this process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const PASSWORD = 'Bench#Passw0rd1';

export interface BenchServiceOptions {
  port: number;
  /** LOGS_DATABASE_URL (PostgreSQL: an empty database of its own); SQLite in the data directory without. */
  url?: string | undefined;
  /** More node options for the service (after `--max-semi-space-size=64 --import tsx`). */
  nodeArgs?: string[];
  /** A directory for the service's `--cpu-prof` profile. */
  cpuProf?: string | undefined;
  /** LOGS_INGEST_BODY_LIMIT (default 16 MiB). */
  bodyLimit?: number;
  /** Requests this process sends at once (the keep-alive agent's sockets). */
  sockets?: number;
  /** The service's stdout shown here (default: dropped). */
  stdout?: boolean;
}

export interface BenchService {
  process: ChildProcess;
  send(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<{ status: number; text: string }>;
  /** A new API key of the administrator's with these permissions, as `Authorization: ApiKey <it>`. */
  apiKey(name: string, permissions: string[]): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchService(options: BenchServiceOptions): Promise<BenchService> {
  const { port } = options;
  const dataDir = mkdtempSync(join(tmpdir(), 'gerbang-bench-logs-'));
  const nodeArgs = ['--max-semi-space-size=64', '--import', 'tsx', ...(options.nodeArgs ?? [])];
  if (options.cpuProf) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${resolve(options.cpuProf)}`);
  const service = spawn(process.execPath, [...nodeArgs, join(ROOT, 'src/cli.ts'), 'logs'], {
    cwd: ROOT,
    stdio: ['ignore', options.stdout ? 'inherit' : 'ignore', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      LOGS_PORT: String(port),
      DATA_DIR: dataDir,
      ...(options.url ? { LOGS_DATABASE_URL: options.url } : {}),
      LOGS_ADMIN_PASSWORD: PASSWORD,
      // The bench's admin logs in without a second factor (the default asks admins to enrol one).
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'warn',
      LOGS_INGEST_RATE_PER_TENANT: '1000000000',
      LOGS_API_RATE_PER_USER: '100000000',
      LOGS_INGEST_BODY_LIMIT: String(options.bodyLimit ?? 16_777_216),
    },
  });
  const kill = () => {
    if (service.exitCode === null) service.kill('SIGTERM');
  };
  process.on('exit', kill);

  const agent = new Agent({ keepAlive: true, maxSockets: options.sockets ?? 1 });
  const send: BenchService['send'] = (method, path, headers, body) =>
    new Promise((done, fail) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', fail);
      });
      req.on('error', fail);
      req.end(body);
    });

  for (let attempt = 0; ; attempt += 1) {
    try {
      if ((await send('GET', '/readyz', {})).status === 200) break;
    } catch {
      // not listening yet
    }
    if (attempt > 600 || service.exitCode !== null) throw new Error('the logs service did not start');
    await new Promise((done) => setTimeout(done, 100));
  }
  const json = { 'content-type': 'application/json' };
  const loginAnswer = await send('POST', '/api/login', json, JSON.stringify({ username: 'admin', password: PASSWORD }));
  if (loginAnswer.status !== 200) throw new Error(`login: ${loginAnswer.status} ${loginAnswer.text}`);
  const token = (JSON.parse(loginAnswer.text) as { token: { access_token: string } }).token.access_token;

  return {
    process: service,
    send,
    async apiKey(name, permissions) {
      const created = await send(
        'POST',
        '/api/v1/api-keys',
        { ...json, authorization: `Bearer ${token}` },
        JSON.stringify({ name, permissions }),
      );
      const key = (JSON.parse(created.text) as { encoded?: string }).encoded;
      if (!key) throw new Error(`no API key: ${created.status} ${created.text}`);
      return key;
    },
    async stop() {
      const exited = new Promise((done) => service.once('exit', done));
      kill();
      await exited;
      agent.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
