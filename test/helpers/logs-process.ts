import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { LOGS_ADMIN_PASSWORD } from './logs.js';
import { nodeArgs } from './node-args.js';

/**
 * Starts `gerbang logs` (the real CLI) in a child process; resolves once it listens (its log line says
 * so), with what it wrote until then (`startOutput`). `env` adds or overrides variables. Its stdout
 * keeps flowing (a test may listen to it).
 */
export async function startLogsProcess(
  databaseUrl: string,
  port: number,
  env: Record<string, string> = {},
): Promise<ChildProcess & { startOutput: string }> {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'logs'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      LOGS_PORT: String(port),
      LOGS_DATABASE_URL: databaseUrl,
      LOGS_ADMIN_PASSWORD,
      LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
      LOG_LEVEL: 'info',
      LOGS_RETENTION_INTERVAL: '0',
      LOGS_SELF_METRICS_INTERVAL: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server listening')) {
        child.stdout.off('data', onData);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`logs process exited (${code}) before listening:\n${output}`)));
  });
  child.stdout.resume();
  return Object.assign(child, { startOutput: output });
}

/** SIGKILL: no shutdown hooks run, as in a crash. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
