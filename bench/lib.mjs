// What every benchmark script here needs: child processes it owns and stops, waiting for a port,
// wrk runs read into numbers, and a section of docs/benchmarks.md replaced in place.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..');

const children = [];

/** Starts a child that `stopAll()` stops; its stderr is printed if it exits on its own with an error. */
export function start(name, command, args, options = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr = (stderr + chunk).slice(-8_000)));
  child.on('exit', (code, signal) => {
    if (code && !child.stopping) process.stderr.write(`${name} exited with ${code ?? signal}\n${stderr}\n`);
  });
  children.push(child);
  return child;
}

export async function waitForPort(port, attempts = 300) {
  for (let i = 0; i < attempts; i += 1) {
    const open = await new Promise((done) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), done(true)));
      socket.once('error', () => done(false));
    });
    if (open) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

const running = (child) => child.exitCode === null && child.signalCode === null;

/** SIGTERM, then give up waiting after 15 s (children already gone are skipped). */
export async function stop(child) {
  if (!running(child)) return;
  child.stopping = true;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((done) => setTimeout(done, 15_000))]);
}

export async function stopAll() {
  for (const child of children) await stop(child);
}

export function toMs(text) {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

/** One wrk run (1 thread); `script` is a Lua file in bench/, `cpus` pins wrk with taskset. */
function wrkCommand(url, { connections = 50, duration = 10, token, script, cpus } = {}) {
  const args = ['-t1', `-c${connections}`, `-d${duration}s`, '--latency'];
  if (token) args.push('-H', `Authorization: ${token}`);
  if (script) args.push('-s', join(HERE, script));
  args.push(url);
  return cpus === undefined ? ['wrk', args] : ['taskset', ['-c', cpus, 'wrk', ...args]];
}

function wrkResult(out) {
  return {
    requests: Number(/(\d+) requests in/.exec(out)?.[1]),
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: toMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99: toMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    errors: /Socket errors:.*/.exec(out)?.[0],
  };
}

export function wrk(url, options) {
  const [command, args] = wrkCommand(url, options);
  return wrkResult(execFileSync(command, args, { encoding: 'utf8' }));
}

/** wrk without blocking this process's event loop (for load generated here at the same time). */
export async function wrkAsync(url, options) {
  const [command, args] = wrkCommand(url, options);
  return wrkResult((await promisify(execFile)(command, args, { encoding: 'utf8' })).stdout);
}

/**
 * The environment of `cli.js gateway` as the proxy benchmarks run it: the defaults as deployed
 * (access log at `logLevel`, info by default; telemetry to `sinkPort`, none without it), one process,
 * the upstream of master-data.
 */
export function benchGatewayEnv({ port, dataDir, password, upstreamPort, sinkPort, logLevel = 'info' }) {
  return {
    ...process.env,
    HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    DATA_DIR: dataDir,
    GATEWAY_ADMIN_PASSWORD: password,
    LOG_LEVEL: logLevel,
    GATEWAY_WORKERS: '1',
    SERVER_SERVICE_MASTER_DATA: `http://127.0.0.1:${upstreamPort}`,
    ...(sinkPort === undefined ? {} : { GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${sinkPort}` }),
  };
}

/** The gateway's wrapped token for its administrator. */
export async function gatewayLogin(port, password) {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ no_pegawai: 'admin', kata_sandi: password }),
  });
  const token = (await response.json()).data?.token;
  if (!token) throw new Error(`gateway login failed (${response.status})`);
  return token;
}

/** Direct children of a process (Linux /proc), with their command lines. */
export function childrenOf(pid) {
  const found = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of text ? text.split(/\s+/).map(Number) : []) {
      found.push({ pid: child, cmdline: readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ') });
    }
  }
  return found;
}

/** CPU time (user + system, all threads) a process has used so far, in milliseconds (Linux /proc). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** Pins a running process (all its threads) to the given CPU list. */
export function pin(pid, cpus) {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

export function versionOf(name, from = ROOT) {
  try {
    return JSON.parse(readFileSync(join(from, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

export const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/**
 * Replaces the lines from `heading` (exactly that line) up to the next "## " heading of
 * docs/benchmarks.md, or appends the section; hand-written sections around it survive.
 */
export function writeSection(heading, section) {
  const file = join(ROOT, 'docs/benchmarks.md');
  let text = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmarks\n\nMeasured with the scripts in `bench/`; tests never assert timings.\n\n';
  const escaped = heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const at = text.search(new RegExp(`^${escaped}[ \\t]*$`, 'm'));
  if (at === -1) {
    const reading = text.search(new RegExp(`^${escaped}:`, 'm')); // a new section goes ahead of its reading, if any
    text = reading === -1 ? `${text.trimEnd()}\n\n${section}` : text.slice(0, reading) + section + text.slice(reading);
  } else {
    const next = text.indexOf('\n## ', at + 1);
    text = text.slice(0, at) + section + (next === -1 ? '' : text.slice(next + 1));
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`);
}

/** Runs a benchmark's main: an error is printed and exits 1; children are stopped and `cleanup` runs either way. */
export function run(main, cleanup = () => {}) {
  main()
    .catch((error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exitCode = 1;
    })
    .finally(async () => {
      await stopAll();
      cleanup();
    });
}
