import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import { sql, type Kysely } from 'kysely';

export const SIGNING_ALGORITHM = 'ES256';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  /** Every stored public key, for `/.well-known/jwks.json` and verification. */
  readonly publicJwks: { keys: JWK[] };
  readonly publicKeys: ReadonlyMap<string, CryptoKey>;
}

/** A row of a service's signing-key table. */
interface SigningKeyRow {
  kid: string;
  algorithm: string;
  private_jwk: string;
  created_at: string;
}

/**
 * The service's token-signing key, kept in its database so that every instance sharing the database
 * signs and verifies alike. Created on first start; when instances race, all of them settle on
 * the oldest key and the others withdraw theirs. Afterwards the newest key signs (rotateSigningKeys
 * adds one) and every stored key verifies. The table is made by the service's first migration.
 */
export async function loadSigningKey(db: Kysely<any>, table: string): Promise<SigningKey> {
  let rows = await keysByAge(db, table);
  if (rows.length === 0) {
    const row = await newKeyRow(Date.now());
    const kid = row.kid;
    await db.insertInto(table).values(row).execute();
    rows = await keysByAge(db, table);
    // Lost a race with another instance: withdraw our key so every instance publishes the same set.
    if (rows[0]!.kid !== kid) await db.deleteFrom(table).where('kid', '=', kid).execute();
    // Winner or loser, keep only the oldest: the other racers' keys are being withdrawn by them.
    rows = rows.slice(0, 1);
  }
  return signingKeyOf(rows);
}

function keysByAge(db: Kysely<any>, table: string): Promise<SigningKeyRow[]> {
  return db.selectFrom(table).selectAll().orderBy('created_at').orderBy('kid').execute() as Promise<SigningKeyRow[]>;
}

/** The newest of `rows` (oldest first) signs; every one of them verifies. */
async function signingKeyOf(rows: readonly SigningKeyRow[]): Promise<SigningKey> {
  const publicJwks: JWK[] = [];
  const publicKeys = new Map<string, CryptoKey>();
  for (const row of rows) {
    const { d: _private, ...publicJwk } = JSON.parse(row.private_jwk) as JWK;
    const jwk = { ...publicJwk, kid: row.kid, alg: row.algorithm, use: 'sig' };
    publicJwks.push(jwk);
    publicKeys.set(row.kid, (await importJWK(jwk, row.algorithm)) as CryptoKey);
  }
  const active = rows.at(-1)!;
  const privateKey = (await importJWK(JSON.parse(active.private_jwk) as JWK, active.algorithm)) as CryptoKey;
  return { kid: active.kid, privateKey, publicJwks: { keys: publicJwks }, publicKeys };
}

/** The keys a token's signature is checked with, by its `kid`. */
export interface VerificationKeys {
  verificationKey(kid: string): CryptoKey | undefined | Promise<CryptoKey | undefined>;
}

/** Channel on which `rotate-signing-keys` tells running instances (PostgreSQL); the payload is the table. */
export const SIGNING_KEYS_CHANNEL = 'gerbang_signing_keys';

/** Announces that `table`'s keys changed, to the instances LISTENing on SIGNING_KEYS_CHANNEL. */
export async function announceSigningKeys(db: Kysely<any>, table: string): Promise<void> {
  await sql`select pg_notify(${SIGNING_KEYS_CHANNEL}, ${table})`.execute(db);
}

/** At most one read of the keys for unknown `kid`s per this long (a flood of forged kids). */
export const UNKNOWN_KID_RELOAD_INTERVAL_MS = 1_000;
/** Every instance reads its keys again this often, whatever it was told. */
export const SIGNING_KEYS_REFRESH_MS = 60_000;

/**
 * A service's signing keys as they are in its database now, so that a rotation needs no restart.
 * Read again (`reload`) when told of a rotation (the gateway LISTENs on PostgreSQL), every
 * SIGNING_KEYS_REFRESH_MS (a job of each service), and when a token names a `kid` not known here: an
 * instance that restarted after a rotation signs with the new key before the others were told.
 * Those reads for unknown kids are rate-limited (one per `unknownKidIntervalMs`, and a token arriving
 * while one is under way waits for it): anyone can send tokens with made-up kids, and each read is
 * a database query. A token whose kid is still unknown then is refused at once.
 */
export class SigningKeyRing implements VerificationKeys {
  private keys: SigningKey;
  private readonly db: Kysely<any>;
  private readonly table: string;
  private readonly now: () => number;
  private readonly unknownKidIntervalMs: number;
  /** The read under way, and one queued behind it (a rotation announced while a read was running). */
  private reading: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private lastUnknownKidReadAt = Number.NEGATIVE_INFINITY;
  /** How many reads the database has been asked for (tests count them). */
  reads = 0;

  private constructor(keys: SigningKey, deps: { db: Kysely<any>; table: string; now: () => number; unknownKidIntervalMs: number }) {
    this.keys = keys;
    this.db = deps.db;
    this.table = deps.table;
    this.now = deps.now;
    this.unknownKidIntervalMs = deps.unknownKidIntervalMs;
  }

  /** The table's keys, made first if there are none (loadSigningKey). */
  static async open(
    db: Kysely<any>,
    table: string,
    { now = Date.now, unknownKidIntervalMs = UNKNOWN_KID_RELOAD_INTERVAL_MS }: { now?: () => number; unknownKidIntervalMs?: number } = {},
  ): Promise<SigningKeyRing> {
    return new SigningKeyRing(await loadSigningKey(db, table), { db, table, now, unknownKidIntervalMs });
  }

  /** The keys now: the newest signs, every one verifies. */
  get current(): SigningKey {
    return this.keys;
  }

  verificationKey(kid: string): CryptoKey | Promise<CryptoKey | undefined> | undefined {
    return this.keys.publicKeys.get(kid) ?? this.readForUnknownKid(kid);
  }

  private async readForUnknownKid(kid: string): Promise<CryptoKey | undefined> {
    if (this.reading) {
      await this.reading.catch(() => undefined);
    } else {
      const now = this.now();
      if (now - this.lastUnknownKidReadAt < this.unknownKidIntervalMs) return undefined;
      this.lastUnknownKidReadAt = now;
      // A database that fails now refuses the token (401), as an unknown key does.
      await this.reload().catch(() => undefined);
    }
    return this.keys.publicKeys.get(kid);
  }

  /**
   * Reads the keys again. A call while a read is under way gets a second read after it (the first
   * may have started before the change it is called for); further calls share that second one.
   */
  reload(): Promise<void> {
    if (this.queued) return this.queued;
    if (this.reading) {
      const queued = this.reading
        .catch(() => undefined)
        .then(() => {
          this.queued = undefined;
          return this.reload();
        });
      this.queued = queued;
      return queued;
    }
    const reading = this.read().finally(() => {
      if (this.reading === reading) this.reading = undefined;
    });
    this.reading = reading;
    return reading;
  }

  private async read(): Promise<void> {
    this.reads += 1;
    // Only keys of the pinned algorithm: a row of another could not sign or verify here.
    const rows = (await keysByAge(this.db, this.table)).filter((row) => row.algorithm === SIGNING_ALGORITHM);
    // Someone emptied the table: keep signing with what we have rather than not at all.
    if (rows.length > 0) this.keys = await signingKeyOf(rows);
  }
}

async function newKeyRow(now: number): Promise<SigningKeyRow> {
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  return {
    kid: randomUUID(),
    algorithm: SIGNING_ALGORITHM,
    private_jwk: JSON.stringify(await exportJWK(privateKey)),
    created_at: new Date(now).toISOString(),
  };
}

/**
 * `cli.js rotate-signing-keys`: a new key, which running instances sign with once they read it
 * (SigningKeyRing), the older ones kept so that tokens they signed stay valid; `prune`: only the newest key is kept (after the longest
 * token lifetime has passed since the last rotation).
 */
export async function rotateSigningKeys(
  db: Kysely<any>,
  table: string,
  options: { prune?: boolean; now?: number } = {},
): Promise<{ kid: string; kept: number; removed: number }> {
  const now = options.now ?? Date.now();
  let kid: string;
  if (options.prune) {
    const newest = (await db
      .selectFrom(table)
      .select('kid')
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .limit(1)
      .executeTakeFirst()) as { kid: string } | undefined;
    if (!newest) throw new Error(`${table} holds no key: start the service once first`);
    kid = newest.kid;
  } else {
    const row = await newKeyRow(now);
    await db.insertInto(table).values(row).execute();
    kid = row.kid;
  }
  const removed = options.prune ? Number((await db.deleteFrom(table).where('kid', '<>', kid).executeTakeFirst()).numDeletedRows) : 0;
  const { n } = (await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()) as { n: number };
  return { kid, kept: Number(n) - 1, removed };
}
