import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';

/** Debian's nginx (`apt-get install nginx`, as .ci/run does). */
export const NGINX = '/usr/sbin/nginx';

export interface TestNginx {
  /** The loopback port nginx listens on in place of the shipped config's `listen <port>`. */
  port(shipped: number): number;
  /** What nginx wrote to its error log. */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * Runs a shipped nginx config (deploy/compose/nginx.conf) in the foreground, on loopback only: each
 * `server <host:port>` of its upstreams becomes `upstreams[host:port]`, each `listen <port>` a port
 * of `listens`, its logs, pid and temporary files go to a private directory. A line of the config
 * the test expects and does not find fails the start, so the test keeps running the file shipped.
 */
export async function startNginx(configFile: string, upstreams: Map<string, string>, listens: Map<number, number>): Promise<TestNginx> {
  if (!existsSync(NGINX)) throw new Error(`no ${NGINX}: apt-get install nginx (as .ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), 'gerbang-nginx-'));
  // As root, nginx's workers run as `nobody`, which must write its temporary files.
  const temp = join(dir, 'temp');
  mkdirSync(temp);
  chmodSync(temp, 0o777);
  chmodSync(dir, 0o755);
  let config = readFileSync(configFile, 'utf8');
  const swap = (from: string | RegExp, to: string) => {
    const next = config.replace(from, to);
    if (next === config) throw new Error(`${configFile}: expected ${String(from)}`);
    config = next;
  };
  swap(/^worker_processes .*;$/m, 'worker_processes 1;');
  swap(/^error_log .*;$/m, `error_log ${join(dir, 'error.log')} warn;`);
  swap(
    /^ {2}access_log .*;$/m,
    [
      `  access_log ${join(dir, 'access.log')};`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${join(temp, kind)};`),
    ].join('\n'),
  );
  for (const [shipped, local] of upstreams) swap(new RegExp(`^( +server )${shipped.replace('.', '\\.')}( |;)`, 'm'), `$1${local}$2`);
  for (const [shipped, local] of listens) swap(new RegExp(`^( +listen )${shipped};$`, 'm'), `$1127.0.0.1:${local};`);
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, config);

  const child = spawn(NGINX, ['-p', dir, '-c', file, '-e', join(dir, 'error.log'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const errors = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '') + stderr;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // nginx writes its pid file once its sockets listen.
    await Promise.race([
      eventually(async () => {
        if (!existsSync(join(dir, 'nginx.pid'))) throw new Error('nginx did not start within 10 s');
      }, 10_000),
      exited.then(([code]) => Promise.reject(new Error(`nginx exited with ${String(code)}`))),
    ]);
  } catch (error) {
    const message = errors();
    await stop();
    throw new Error(`${(error as Error).message}\n${message}`);
  }
  return {
    port(shipped) {
      const local = listens.get(shipped);
      if (local === undefined) throw new Error(`no listen ${shipped} in ${configFile}`);
      return local;
    },
    errors,
    stop,
  };
}
