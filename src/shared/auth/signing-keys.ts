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
 * the oldest key and the others withdraw theirs. The table is made by the service's migrations (`createSigningKeysTable`).
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
    const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
    const kid = randomUUID();
    const jwk = await exportJWK(privateKey);
    await db
      .insertInto(table)
      .values({ kid, algorithm: SIGNING_ALGORITHM, private_jwk: JSON.stringify(jwk), created_at: new Date().toISOString() })
      .execute();
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
  const active = rows[0]!;
  const privateKey = (await importJWK(JSON.parse(active.private_jwk) as JWK, active.algorithm)) as CryptoKey;
  return { kid: active.kid, privateKey, publicJwks: { keys: publicJwks }, publicKeys };
}

/** Migration helper: the table `loadSigningKey` reads. */
export async function createSigningKeysTable(db: Kysely<any>, table: string): Promise<void> {
  await db.schema
    .createTable(table)
    .addColumn('kid', 'text', (col) => col.primaryKey())
    .addColumn('algorithm', 'text', (col) => col.notNull())
    .addColumn('private_jwk', 'text', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .execute();
}
