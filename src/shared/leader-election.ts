import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';
import { POSTGRES_CONNECT_TIMEOUT_MS } from './db/postgres-pool.js';

/**
 * Which instance of a service runs the work that must run once per cluster (Lifecycle's elected
 * jobs): retention, alert evaluation and webhooks, the expiry of document ids. docs/log-store.md,
 * "Several instances".
 */
export interface Election {
  /** Whether this instance leads now. */
  readonly leading: boolean;
  /** Called on every change: true when this instance starts leading, false when it stops. */
  onChange(listener: (leading: boolean) => void): void;
  /** Campaigns from now on; resolves after the first attempt (a lone instance leads once it resolves). Never rejects. */
  start(): Promise<void>;
  /** Stops campaigning; a leader gives the lead up (another instance takes it within its retry interval). */
  close(): Promise<void>;
}

/** The only instance there can be (SQLite: the data lock refuses a second process): it always leads. */
export const soleInstance: Election = {
  leading: true,
  onChange: () => undefined,
  start: async () => undefined,
  close: async () => undefined,
};

export interface PostgresElectionOptions {
  connectionString: string;
  /** The advisory lock's key (a bigint): one per service and database. */
  lockKey: bigint;
  /** What is elected, for the log lines and the connection's application_name. */
  name: string;
  log: FastifyBaseLogger;
  /**
   * How often an instance that does not lead tries to take the lock, and how often the leader checks
   * its connection (a check that does not answer within this ends its lead). Default 2 s.
   */
  retryMs?: number;
}

/** Seconds the server waits before probing an idle election connection, and between probes (TCP keepalives). */
const SERVER_KEEPALIVE = { idle: 5, interval: 2, count: 3 };

/**
 * Leader election by a session-level PostgreSQL advisory lock (pg_try_advisory_lock) held on a
 * connection of its own. Whoever holds the lock leads; the others try again every `retryMs`. The
 * lock goes with the leader's connection: a process that ends, however it ends, loses it at once
 * (the server sees the socket close); one cut off from the server loses it once the server's
 * keepalive probes fail (about 11 s: SERVER_KEEPALIVE), and stops leading itself before that, as
 * soon as a check of its connection fails or goes unanswered for `retryMs`. So two instances never
 * lead at once for longer than a check, and an instance takes over within seconds of a leader's end.
 */
export class PostgresElection implements Election {
  #leading = false;
  #client: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #round: Promise<void> = Promise.resolve();
  /** The last attempt failed (its warning is logged once, not every round). */
  #failing = false;
  readonly #listeners: ((leading: boolean) => void)[] = [];
  readonly #retryMs: number;

  constructor(private readonly options: PostgresElectionOptions) {
    this.#retryMs = options.retryMs ?? 2_000;
  }

  get leading(): boolean {
    return this.#leading;
  }

  onChange(listener: (leading: boolean) => void): void {
    this.#listeners.push(listener);
  }

  async start(): Promise<void> {
    if (this.#closed || this.#timer !== undefined) return;
    await this.#runRound();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#round;
    if (this.#leading) this.#change(false, 'closing');
    await this.#drop();
  }

  /** One attempt (or check), then the next one `retryMs` later. */
  #runRound(): Promise<void> {
    this.#round = this.#attempt().finally(() => {
      if (this.#closed) return;
      this.#timer = setTimeout(() => void this.#runRound(), this.#retryMs);
      this.#timer.unref();
    });
    return this.#round;
  }

  async #attempt(): Promise<void> {
    try {
      const client = this.#client ?? (await this.#connect());
      if (this.#leading) {
        await client.query('SELECT 1');
      } else {
        const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS taken', [
          this.options.lockKey.toString(),
        ]);
        if (rows[0]?.taken === true && !this.#closed) this.#change(true, 'took the lock');
      }
      this.#failing = false;
    } catch (error) {
      await this.#lost(this.#client, error);
    }
  }

  async #connect(): Promise<pg.Client> {
    const { default: pg } = await import('pg');
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: `gerbang ${this.options.name}`,
      connectionTimeoutMillis: Math.min(POSTGRES_CONNECT_TIMEOUT_MS, Math.max(this.#retryMs, 1_000)),
      // A check that does not answer within the interval is a lost connection.
      query_timeout: Math.max(this.#retryMs, 1_000),
      keepAlive: true,
      keepAliveInitialDelayMillis: SERVER_KEEPALIVE.idle * 1000,
    });
    this.#client = client;
    // The connection's end between rounds (the server restarted, the lock holder was terminated).
    client.on('error', (error) => void this.#lost(client, error));
    client.on('end', () => void this.#lost(client, new Error('the election connection ended')));
    await client.connect();
    // The server frees a dead client's lock once these probes fail (SERVER_KEEPALIVE).
    await client.query(
      `SET tcp_keepalives_idle = ${SERVER_KEEPALIVE.idle}; SET tcp_keepalives_interval = ${SERVER_KEEPALIVE.interval}; SET tcp_keepalives_count = ${SERVER_KEEPALIVE.count}`,
    );
    return client;
  }

  /** The connection failed: a leader stops leading at once, and the next round connects again. */
  async #lost(client: pg.Client | undefined, error: unknown): Promise<void> {
    if (client === undefined || client !== this.#client) return;
    this.#client = undefined;
    if (this.#leading) this.#change(false, 'lost its connection', error);
    else if (!this.#closed && !this.#failing) {
      this.options.log.warn({ err: error, election: this.options.name }, 'leader election: no connection to the database; retrying');
    }
    this.#failing = true;
    await client.end().catch(() => undefined);
  }

  async #drop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    // Closing the session releases its advisory locks.
    await client?.end().catch(() => undefined);
  }

  #change(leading: boolean, reason: string, error?: unknown): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    const details = { election: this.options.name, reason, ...(error === undefined ? {} : { err: error }) };
    if (leading) this.options.log.info(details, 'leadership gained');
    else if (error === undefined) this.options.log.info(details, 'leadership given up');
    else this.options.log.warn(details, 'leadership lost');
    for (const listener of this.#listeners) listener(leading);
  }
}
