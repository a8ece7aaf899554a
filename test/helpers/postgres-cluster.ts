import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { closedPort } from './upstream.js';

/**
 * A PostgreSQL primary and a streaming hot standby of it, from Debian's binaries (`apt-get install
 * postgresql`, as .ci/run does), each on a free loopback port, in one private temporary directory:
 * what an operator runs for read replicas, small enough for a test. Trust authentication, reachable
 * only on 127.0.0.1 and the directory's own socket. Without the binaries it throws (never skips).
 */
export interface PostgresCluster {
  /** The primary's URL for `database` (default `postgres`). */
  primaryUrl(database?: string): string;
  /** The standby's URL for `database` (read-only: a hot standby). */
  standbyUrl(database?: string): string;
  /** Creates a database on the primary (the standby gets it by replication). */
  createDatabase(name: string): Promise<void>;
  /** `pg_ctl restart --mode fast` of the primary: every client connection is cut; the standby reconnects by itself. */
  restartPrimary(): Promise<void>;
  /**
   * Waits until the standby has replayed the primary's WAL up to the primary's LSN at the call;
   * resolves with the milliseconds that took (0 if it already had).
   */
  waitForReplay(timeoutMs?: number): Promise<number>;
  /** The standby's replay lag as the primary sees it (`pg_stat_replication.replay_lag`, ms), null when idle. */
  replayLagMs(): Promise<number | null>;
  /** Pauses (`pg_wal_replay_pause()`) or resumes the standby's replay: its lag grows while the primary writes. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops the standby (immediate: its clients are cut) and starts it again. */
  stopStandby(): Promise<void>;
  startStandby(): Promise<void>;
  /**
   * Table scans (sequential and index) the standby ran in `database`'s tables so far: grows only when
   * a client reads tables there (replay counts none). The standby's statistics show a read within
   * about ten seconds (PostgreSQL flushes an idle backend's counts that late at most).
   */
  standbyTableScans(database: string): Promise<number>;
  /** Stops both servers (immediate) and removes the directory. */
  remove(): Promise<void>;
}

const TOOLS = ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'];

/** The newest Debian PostgreSQL with a server and pg_basebackup. */
export function debianPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((version) => /^\d+$/.test(version)) : [];
  const complete = versions
    .sort((a, b) => Number(b) - Number(a))
    .find((version) => TOOLS.every((tool) => existsSync(join(root, version, 'bin', tool))));
  if (complete === undefined) throw new Error(`no Debian PostgreSQL with ${TOOLS.join(', ')} under ${root}: apt-get install postgresql`);
  return join(root, complete, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** Runs a server tool, as the `postgres` account when this is root (initdb and postgres refuse root). */
function runTool(bin: string, args: string[], timeoutMs = 120_000): Promise<void> {
  const [command, commandArgs] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) =>
      status === 0 ? resolve() : reject(new Error(`${bin} ${args.join(' ')} exited ${status}:\n${output}`)),
    );
  });
}

async function queryOne<T>(url: string, text: string, values: unknown[] = []): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(text, values)).rows[0] as T;
  } finally {
    await client.end();
  }
}

/**
 * Starts a primary and a standby streaming from it (`pg_basebackup -R`). `settings` are extra
 * `-c name=value` for both servers.
 */
export async function startPostgresCluster(settings: Record<string, string> = {}): Promise<PostgresCluster> {
  const bin = debianPostgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'gerbang-pg-cluster-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const primaryData = join(dir, 'primary');
  const standbyData = join(dir, 'standby');
  const [primaryPort, standbyPort] = [await closedPort(), await closedPort()];
  const url = (port: number, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const options = (port: number) =>
    [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-k ${dir}`,
      '-c fsync=off',
      '-c max_connections=200',
      // The standby retries its primary every 200 ms (default 5 s) after the primary restarts.
      '-c wal_retrieve_retry_interval=200ms',
      '-c wal_receiver_status_interval=1s',
      ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
    ].join(' ');
  const started: string[] = [];
  const pgCtl = (args: string[]) => runTool(join(bin, 'pg_ctl'), args);
  const startServer = async (data: string, port: number, log: string) => {
    await pgCtl(['start', '--pgdata', data, '--wait', '--timeout', '60', '--log', join(dir, log), '--options', options(port)]);
    started.push(data);
  };
  const remove = async () => {
    for (const data of started.reverse()) await pgCtl(['stop', '--pgdata', data, '--mode', 'immediate', '--wait']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await runTool(join(bin, 'initdb'), [
      '--pgdata',
      primaryData,
      '--username',
      'postgres',
      '--auth',
      'trust',
      '--no-sync',
      '--encoding',
      'UTF8',
    ]);
    await startServer(primaryData, primaryPort, 'primary.log');
    await runTool(join(bin, 'pg_basebackup'), [
      '--pgdata',
      standbyData,
      '--dbname',
      `host=127.0.0.1 port=${primaryPort} user=postgres application_name=standby`,
      '--write-recovery-conf',
      '--wal-method=stream',
      '--checkpoint=fast',
      '--no-sync',
    ]);
    await startServer(standbyData, standbyPort, 'standby.log');
  } catch (error) {
    const logs = ['primary.log', 'standby.log']
      .filter((name) => existsSync(join(dir, name)))
      .map((name) => `${name}:\n${readFileSync(join(dir, name), 'utf8')}`);
    await remove();
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`);
  }

  const cluster: PostgresCluster = {
    primaryUrl: (database) => url(primaryPort, database),
    standbyUrl: (database) => url(standbyPort, database),
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await queryOne(url(primaryPort), `CREATE DATABASE ${name}`);
    },
    async restartPrimary() {
      // With its log file, as at start: otherwise the new server would hold this process's pipes open.
      await pgCtl(['restart', '--pgdata', primaryData, '--mode', 'fast', '--wait', '--timeout', '60', '--log', join(dir, 'primary.log')]);
    },
    async waitForReplay(timeoutMs = 30_000) {
      const { lsn } = await queryOne<{ lsn: string }>(url(primaryPort), 'SELECT pg_current_wal_lsn()::text AS lsn');
      const start = performance.now();
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { caught } = await queryOne<{ caught: boolean | null }>(
          url(standbyPort),
          'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught',
          [lsn],
        ).catch(() => ({ caught: null }));
        if (caught === true) return performance.now() - start;
        if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${lsn} within ${timeoutMs} ms`);
        await delay(10);
      }
    },
    async replayLagMs() {
      const row = await queryOne<{ ms: number | null } | undefined>(
        url(primaryPort),
        "SELECT EXTRACT(EPOCH FROM replay_lag) * 1000 AS ms FROM pg_stat_replication WHERE application_name = 'standby'",
      );
      return row?.ms === undefined || row.ms === null ? null : Number(row.ms);
    },
    async pauseReplay() {
      await queryOne(url(standbyPort), 'SELECT pg_wal_replay_pause()');
    },
    async resumeReplay() {
      await queryOne(url(standbyPort), 'SELECT pg_wal_replay_resume()');
    },
    async stopStandby() {
      await pgCtl(['stop', '--pgdata', standbyData, '--mode', 'immediate', '--wait']);
    },
    async startStandby() {
      await pgCtl([
        'start',
        '--pgdata',
        standbyData,
        '--wait',
        '--timeout',
        '60',
        '--log',
        join(dir, 'standby.log'),
        '--options',
        options(standbyPort),
      ]);
    },
    async standbyTableScans(database) {
      const { scans } = await queryOne<{ scans: string }>(
        url(standbyPort, database),
        'SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)::text AS scans FROM pg_stat_user_tables',
      );
      return Number(scans);
    },
    remove,
  };
  return cluster;
}
