import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import type { Kysely } from 'kysely';

export const SIGNING_ALGORITHM = 'ES256';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  /** Every stored public key, for `/.well-known/jwks.json` and verification. */
  readonly publicJwks: { keys: JWK[] };
  readonly publicKeys: ReadonlyMap<string, CryptoKey>;
}

/**
 * The service's token-signing key, kept in its database so that every instance sharing the database
 * signs and verifies alike. Created on first start; when instances race, all of them settle on
 * the oldest key and the others withdraw theirs. Afterwards the newest key signs (rotateSigningKeys
 * adds one) and every stored key verifies. The table is made by the service's first migration.
 */
/** A row of a service's signing-key table. */
interface SigningKeyRow {
  kid: string;
  algorithm: string;
  private_jwk: string;
  created_at: string;
}

export async function loadSigningKey(db: Kysely<any>, table: string): Promise<SigningKey> {
  const keysByAge = () => db.selectFrom(table).selectAll().orderBy('created_at').orderBy('kid').execute() as Promise<SigningKeyRow[]>;
  let rows = await keysByAge();
  if (rows.length === 0) {
    const row = await newKeyRow(Date.now());
    const kid = row.kid;
    await db.insertInto(table).values(row).execute();
    rows = await keysByAge();
    // Lost a race with another instance: withdraw our key so every instance publishes the same set.
    if (rows[0]!.kid !== kid) await db.deleteFrom(table).where('kid', '=', kid).execute();
    // Winner or loser, keep only the oldest: the other racers' keys are being withdrawn by them.
    rows = rows.slice(0, 1);
  }
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
 * `cli.js rotate-signing-keys`: a new key, which instances sign with once restarted, the older ones
 * kept so that tokens they signed stay valid; `prune`: only the newest key is kept (after the longest
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
