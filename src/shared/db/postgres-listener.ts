import pg from 'pg';
import { realSchedule, type Schedule } from '../restart-policy.js';
import { Backoff } from './backoff.js';
import { POSTGRES_CONNECT_TIMEOUT_MS } from './postgres-pool.js';

/** What the listener needs of a pg.Client (a fake one in unit tests). */
export interface ListenerClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string | undefined }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

export interface PostgresListenerOptions {
  /** A new, unconnected client: one per connection attempt. */
  openClient: () => ListenerClient;
  /** The handler of each channel listened on, given each notification's payload. */
  channels: ReadonlyMap<string, (payload: string) => void>;
  /** The connection was lost (the server restarted, the network failed, a heartbeat went unanswered). */
  onLost: (error: Error) => void;
  /** Listening again after a loss: whatever was announced meanwhile was missed. */
  onRestored: (outage: { downMs: number; attempts: number }) => void;
  /** A reconnection attempt failed; the next one is in `retryInMs`. */
  onAttemptFailed?: (error: Error, attempt: number, retryInMs: number) => void;
  backoff?: Backoff;
  schedule?: Schedule;
  now?: () => number;
  /**
   * How often the connection is asked `SELECT 1`, and how long it may take to answer: a network cut
   * that drops packets closes nothing, and a listener only ever receives, so without this it would
   * not notice. 0: no heartbeat.
   */
  heartbeatMs?: number;
}

/** A listening connection's heartbeat, and how long its answer may take (docs/scaling.md). */
export const LISTENER_HEARTBEAT_MS = 5_000;

/**
 * LISTENs on its own PostgreSQL connection and, when that connection is lost, connects again with
 * a capped, jittered back-off (Backoff) until it is back, saying so through onLost and onRestored.
 * Notifications sent while it was away are lost for good (PostgreSQL keeps none for a listener that
 * is not connected): onRestored is where a user catches up.
 */
export class PostgresListener {
  private readonly options: PostgresListenerOptions;
  private readonly backoff: Backoff;
  private readonly schedule: Schedule;
  private readonly now: () => number;
  private client: ListenerClient | undefined;
  private state: 'starting' | 'up' | 'down' | 'closed' = 'starting';
  private lostAt = 0;
  private attempts = 0;
  private retry: { cancel(): void } | undefined;
  private heartbeat: { cancel(): void } | undefined;

  constructor(options: PostgresListenerOptions) {
    this.options = options;
    this.backoff = options.backoff ?? new Backoff();
    this.schedule = options.schedule ?? realSchedule;
    this.now = options.now ?? Date.now;
    for (const channel of options.channels.keys()) {
      // Channels are this code's own names, written into LISTEN as identifiers.
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    }
  }

  /** True while listening. */
  get connected(): boolean {
    return this.state === 'up';
  }

  /** The first connection: its failure is the caller's (a service that cannot reach its database does not start). */
  async start(): Promise<void> {
    await this.connect();
    if (this.state === 'closed') return;
    this.state = 'up';
    this.beatLater();
  }

  async close(): Promise<void> {
    this.state = 'closed';
    this.retry?.cancel();
    this.heartbeat?.cancel();
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = this.options.openClient();
    this.client = client;
    let failure: Error | undefined;
    const fail = (error: Error) => {
      failure ??= error;
      this.lost(client, error);
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('the listening connection ended')));
    client.on('notification', (message) => {
      if (client !== this.client || message.payload === undefined) return;
      this.options.channels.get(message.channel)?.(message.payload);
    });
    try {
      await client.connect();
      for (const channel of this.options.channels.keys()) await client.query(`LISTEN ${channel}`);
      // Lost already, before it counted as up.
      if (failure) throw failure;
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
  }

  private lost(client: ListenerClient, error: Error): void {
    if (client !== this.client || this.state !== 'up') return;
    this.state = 'down';
    this.lostAt = this.now();
    this.attempts = 0;
    this.heartbeat?.cancel();
    client.end().catch(() => undefined);
    this.options.onLost(error);
    this.retryLater();
  }

  private retryLater(): void {
    const delay = this.backoff.next();
    this.retry = this.schedule(() => void this.reconnect(delay), delay);
  }

  private async reconnect(waitedMs: number): Promise<void> {
    if (this.state !== 'down') return;
    this.attempts += 1;
    try {
      await this.connect();
    } catch (error) {
      if (this.state !== 'down') return;
      this.retryLater();
      this.options.onAttemptFailed?.(error as Error, this.attempts, waitedMs);
      return;
    }
    if (this.state !== 'down') {
      await this.client?.end().catch(() => undefined);
      return;
    }
    this.state = 'up';
    this.backoff.reset();
    this.beatLater();
    this.options.onRestored({ downMs: this.now() - this.lostAt, attempts: this.attempts });
  }

  private beatLater(): void {
    const every = this.options.heartbeatMs ?? LISTENER_HEARTBEAT_MS;
    if (every <= 0) return;
    const client = this.client!;
    this.heartbeat = this.schedule(() => void this.beat(client, every), every);
  }

  private async beat(client: ListenerClient, withinMs: number): Promise<void> {
    if (client !== this.client || this.state !== 'up') return;
    let timer: { cancel(): void } | undefined;
    const unanswered = new Promise<never>((_resolve, reject) => {
      timer = this.schedule(() => reject(new Error(`no answer to a heartbeat within ${withinMs} ms`)), withinMs);
    });
    try {
      await Promise.race([client.query('SELECT 1'), unanswered]);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    } finally {
      timer?.cancel();
    }
    if (client === this.client && this.state === 'up') this.beatLater();
  }
}

/** A pg client for a PostgresListener on `url`, named `applicationName` in `pg_stat_activity`. */
export function postgresListenerClient(url: string, applicationName: string): ListenerClient {
  return new pg.Client({
    connectionString: url,
    application_name: applicationName,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    keepAlive: true,
  });
}
