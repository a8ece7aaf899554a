import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { openPostgresPool } from '../../../../shared/db/postgres-pool.js';
import { currentRead } from '../read-budget.js';
import { cancelBackendAs, cancellingPool } from './postgres-reads.js';

/**
 * The log store's reads on PostgreSQL hot standbys (LOGS_DATABASE_READ_URL, docs/scaling.md, "Read
 * replicas"). Every few seconds each replica's lag behind the primary is measured; a replica that
 * lags past the bound, or cannot be asked, is left out and reads go to the others, else to the
 * primary's read pool. Statements of one read stay on the server its first statement went to (a
 * read sees one moment of one server), unless a connection to it cannot be opened.
 */

/** What a replica's lag is measured against and how often; what is logged. */
export interface ReadReplicasOptions {
  /** The standbys' URLs (never logged, never a label: a replica is named by its place in the list, from 1). */
  urls: readonly string[];
  /** A replica further behind than this is left out (LOGS_READ_REPLICA_MAX_LAG). */
  maxLagMs: number;
  /** How often lag is measured (LOGS_READ_REPLICA_CHECK_INTERVAL). */
  checkIntervalMs: number;
  /** Connections of each replica's read pool (LOGS_SEARCH_WORKERS), and the statement budget (LOGS_SEARCH_TIMEOUT). */
  workers: number;
  timeoutMs: number;
  /** Where a replica left out or taken back is told (pino-like). */
  log?: ReplicaLog | undefined;
  /** Milliseconds of a monotonic clock (default performance.now). */
  clock?: () => number;
}

export interface ReplicaLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** One replica as the metrics and tests see it. */
export interface ReplicaState {
  /** Its place in LOGS_DATABASE_READ_URL, from 1. */
  readonly replica: number;
  /** Whether reads go to it. */
  readonly up: boolean;
  /** Its lag at the last measurement (seconds, an upper bound); undefined before one or while it cannot be asked. */
  readonly lagSeconds: number | undefined;
  /** WAL bytes it had not replayed at the last measurement. */
  readonly lagBytes: number | undefined;
}

/** A replica that cannot be asked within this is counted down (its connection, and each check's statement). */
const CHECK_TIMEOUT_CAP_MS = 5_000;

/** The application_name of the connections, so that a DBA tells them from the writes' (pg_stat_activity). */
export const READ_APPLICATION_NAME = 'gerbang-logs-reads';
const CHECK_APPLICATION_NAME = 'gerbang-logs-replica-check';

interface Replica {
  readonly index: number;
  readonly reads: PostgresPool;
  readonly check: pg.Pool;
  up: boolean;
  /** Set once a check or a connection decided (so the first decision is logged either way). */
  known: boolean;
  lagMs: number | undefined;
  lagBytes: number | undefined;
}

/** A point of the primary's WAL and when it was seen (clock ms). */
interface Sample {
  readonly at: number;
  readonly lsn: bigint;
}

/** `16/B374D848` as a number. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/**
 * A replica's lag as an upper bound of how old what it shows is (ms), from what the last check saw:
 * - 0 when it had replayed all the WAL the primary had written just before it was asked;
 * - else the smaller of two bounds: the time since the primary wrote the newest WAL point of
 *   `history` the replica had replayed (the replica shows at least that moment: exact to one check
 *   interval, and right however idle the primary is), and the time since the primary committed the
 *   last transaction the replica replayed (`pg_last_xact_replay_timestamp()`, read against the
 *   primary's clock: exact while the primary commits, but old when it is idle, hence only a bound);
 * - with neither, the time since the oldest point of `history`, which the replica had not reached.
 */
export function replicaLagMs(input: {
  replayed: bigint;
  history: readonly Sample[];
  now: number;
  /** Primary's clock minus the last replayed commit's timestamp, ms; undefined when the replica replayed none. */
  sinceLastReplayedCommitMs: number | undefined;
}): number {
  const { replayed, history, now, sinceLastReplayedCommitMs } = input;
  const newest = history.at(-1);
  if (newest !== undefined && replayed >= newest.lsn) return 0;
  let reached: Sample | undefined;
  for (const sample of history) if (sample.lsn <= replayed) reached = sample;
  const bounds = [reached && now - reached.at, sinceLastReplayedCommitMs].filter((bound): bound is number => bound !== undefined);
  if (bounds.length > 0) return Math.max(0, Math.min(...bounds));
  return history.length > 0 ? now - history[0]!.at : 0;
}

export class ReadReplicas {
  readonly #replicas: Replica[];
  readonly #primary: PostgresPool;
  readonly #primaryCheck: pg.Pool;
  readonly #options: ReadReplicasOptions;
  readonly #clock: () => number;
  readonly #history: Sample[] = [];
  /** The server each read in progress started on. */
  readonly #pinned = new WeakMap<object, Replica | null>();
  #turn = 0;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(primary: PostgresPool, primaryCheck: pg.Pool, replicas: Replica[], options: ReadReplicasOptions) {
    this.#primary = primary;
    this.#primaryCheck = primaryCheck;
    this.#replicas = replicas;
    this.#options = options;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /**
   * Opens a read pool and a one-connection check pool per replica and one check connection to the
   * primary (`primaryUrl`), measures once (so that reads start on the replicas that are fit) and
   * then every checkIntervalMs. `primary`: the primary's read pool, where reads go when no replica may.
   */
  static async open(primaryUrl: string, primary: PostgresPool, options: ReadReplicasOptions): Promise<ReadReplicas> {
    const checkTimeoutMs = Math.min(CHECK_TIMEOUT_CAP_MS, Math.max(1_000, options.checkIntervalMs));
    const checkPool = (url: string) =>
      openPostgresPool({
        connectionString: url,
        max: 1,
        connectionTimeoutMillis: checkTimeoutMs,
        statement_timeout: checkTimeoutMs,
        application_name: CHECK_APPLICATION_NAME,
      });
    const replicas: Replica[] = [];
    for (const [position, url] of options.urls.entries()) {
      const pool = await openPostgresPool({
        connectionString: url,
        max: options.workers,
        connectionTimeoutMillis: checkTimeoutMs,
        statement_timeout: Math.max(1, options.timeoutMs),
        application_name: READ_APPLICATION_NAME,
      });
      replicas.push({
        index: position + 1,
        reads: cancellingPool(pool, cancelBackendAs({ connectionString: url, connectionTimeoutMillis: checkTimeoutMs })),
        check: await checkPool(url),
        up: false,
        known: false,
        lagMs: undefined,
        lagBytes: undefined,
      });
    }
    const replicaSet = new ReadReplicas(primary, await checkPool(primaryUrl), replicas, options);
    await replicaSet.check();
    replicaSet.#schedule();
    return replicaSet;
  }

  /** The pool the reads' Kysely uses: a connection of the read's server. */
  readonly pool: PostgresPool = {
    connect: () => this.#connect(),
    end: () => this.close(),
  };

  /** Each replica's state, in the order of LOGS_DATABASE_READ_URL. */
  states(): ReplicaState[] {
    return this.#replicas.map((replica) => ({
      replica: replica.index,
      up: replica.up,
      lagSeconds: replica.lagMs === undefined ? undefined : replica.lagMs / 1000,
      lagBytes: replica.lagBytes,
    }));
  }

  /** Measures every replica now (after a check in progress); resolves once their states are updated. */
  check(): Promise<void> {
    this.#checking = this.#checking.then(() => this.#measure());
    return this.#checking;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#checking;
    await Promise.all([
      this.#primary.end(),
      this.#primaryCheck.end(),
      ...this.#replicas.flatMap((replica) => [replica.reads.end(), replica.check.end()]),
    ]);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.check().finally(() => this.#schedule()), this.#options.checkIntervalMs);
    this.#timer.unref();
  }

  async #connect(): Promise<PostgresPoolClient> {
    const read = currentRead();
    let server = read === undefined ? undefined : this.#pinned.get(read);
    if (server === undefined) server = this.#choose();
    // A replica that cannot be reached is left out at once: this read and the next go elsewhere.
    while (server !== null) {
      try {
        const client = await server.reads.connect();
        if (read !== undefined) this.#pinned.set(read, server);
        return client;
      } catch (error) {
        this.#leaveOut(server, { reason: 'unreachable', error: errorCode(error) });
        server = this.#choose();
      }
    }
    if (read !== undefined) this.#pinned.set(read, null);
    return this.#primary.connect();
  }

  /** The next replica in use, in turn; null (the primary) when none is. */
  #choose(): Replica | null {
    const usable = this.#replicas.filter((replica) => replica.up);
    if (usable.length === 0) return null;
    this.#turn = (this.#turn + 1) % usable.length;
    return usable[this.#turn]!;
  }

  async #measure(): Promise<void> {
    if (this.#closed) return;
    const primary = await this.#primaryCheck
      .query<{ lsn: string; now_ms: number }>(
        `SELECT pg_current_wal_lsn()::text AS lsn, extract(epoch FROM clock_timestamp()) * 1000 AS now_ms`,
      )
      .then(({ rows }) => ({ at: this.#clock(), lsn: parseLsn(rows[0]!.lsn), nowMs: Number(rows[0]!.now_ms) }))
      .catch(() => undefined);
    if (primary !== undefined) this.#remember({ at: primary.at, lsn: primary.lsn });
    await Promise.all(this.#replicas.map((replica) => this.#measureReplica(replica, primary)));
  }

  /** Keeps the primary's WAL points long enough to tell any lag up to twice the bound. */
  #remember(sample: Sample): void {
    this.#history.push(sample);
    const keepFrom = sample.at - 2 * this.#options.maxLagMs - 2 * this.#options.checkIntervalMs;
    while (this.#history.length > 1 && this.#history[1]!.at < keepFrom) this.#history.shift();
  }

  async #measureReplica(replica: Replica, primary: { lsn: bigint; nowMs: number } | undefined): Promise<void> {
    let row: { recovery: boolean; replayed: string | null; replayed_at_ms: number | null };
    try {
      const { rows } = await replica.check.query<typeof row>(
        `SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replayed,
          extract(epoch FROM pg_last_xact_replay_timestamp()) * 1000 AS replayed_at_ms`,
      );
      row = rows[0]!;
    } catch (error) {
      replica.lagMs = undefined;
      replica.lagBytes = undefined;
      this.#leaveOut(replica, { reason: 'unreachable', error: errorCode(error) });
      return;
    }
    if (!row.recovery || row.replayed === null) {
      replica.lagMs = undefined;
      replica.lagBytes = undefined;
      this.#leaveOut(replica, { reason: 'not a hot standby' });
      return;
    }
    // Without the primary's WAL position there is nothing to measure against: the replica stays as it was.
    if (primary === undefined) {
      if (!replica.known) this.#leaveOut(replica, { reason: 'primary not reachable to measure lag' });
      return;
    }
    const replayed = parseLsn(row.replayed);
    const lagMs = replicaLagMs({
      replayed,
      history: this.#history,
      now: this.#clock(),
      sinceLastReplayedCommitMs: row.replayed_at_ms === null ? undefined : primary.nowMs - Number(row.replayed_at_ms),
    });
    replica.lagMs = lagMs;
    replica.lagBytes = Number(primary.lsn > replayed ? primary.lsn - replayed : 0n);
    const lagSeconds = lagMs / 1000;
    const maxLagSeconds = this.#options.maxLagMs / 1000;
    if (lagMs > this.#options.maxLagMs) this.#leaveOut(replica, { reason: 'lag', lagSeconds, maxLagSeconds });
    // Taken back below half the bound, so that a replica lagging about the bound does not flap.
    else if (!replica.up && (lagMs <= this.#options.maxLagMs / 2 || !replica.known)) this.#takeBack(replica, lagSeconds);
  }

  #leaveOut(replica: Replica, details: Record<string, unknown>): void {
    if (replica.up || !replica.known) {
      this.#options.log?.warn(
        { replica: replica.index, ...details },
        'read replica left out: the log store reads from the other replicas, else the primary',
      );
    }
    replica.up = false;
    replica.known = true;
  }

  #takeBack(replica: Replica, lagSeconds: number): void {
    this.#options.log?.info({ replica: replica.index, lagSeconds }, 'read replica in use: the log store reads from it');
    replica.up = true;
    replica.known = true;
  }
}

/** What a failed connection or check is logged as: its code (never its message, which may name the server). */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return /timeout/i.test((error as Error | null)?.message ?? '') ? 'timeout' : 'error';
}
