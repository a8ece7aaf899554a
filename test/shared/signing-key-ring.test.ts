import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { signToken, verifyToken, type TokenProfile } from '../../src/shared/auth/jwt.js';
import { loadSigningKey, rotateSigningKeys, SigningKeyRing } from '../../src/shared/auth/signing-keys.js';
import { openDatabase, type Database } from '../../src/shared/db/database.js';
import { TestClock } from '../helpers/clock.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';

/**
 * A service's signing keys read again while it runs: a token of a key rotated in by another
 * process is accepted on first sight, and the reads that tokens of unknown kids cause are
 * rate-limited (the injected clock says when the next one may happen).
 */
const TABLE = 'test_signing_keys';
const PROFILE: TokenProfile = { issuer: 'gerbang', audience: 'gerbang', type: 'at+jwt' };
const INTERVAL_MS = 1_000;

for (const dialect of DIALECTS) {
  describe(`SigningKeyRing [${dialect}]`, () => {
    let testDatabase: TestDatabase;
    let database: Database<any>;
    const clock = new TestClock();

    before(async () => {
      testDatabase = await createTestDatabase(dialect);
      database = await openDatabase<any>(testDatabase.url);
      await database.db.schema
        .createTable(TABLE)
        .addColumn('kid', 'text', (col) => col.primaryKey())
        .addColumn('algorithm', 'text', (col) => col.notNull())
        .addColumn('private_jwk', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
    });
    after(async () => {
      await database.close();
      await testDatabase.drop();
    });

    /** A token as another instance, which loaded the keys as they are now, signs it. */
    const signedElsewhere = async () => signToken(await loadSigningKey(database.db, TABLE), PROFILE, { sub: 'u1' }, 300, clock.now());
    const verify = (ring: SigningKeyRing, jwt: string) => verifyToken(ring, PROFILE, jwt, clock.now());
    const forged = async (alg = 'ES256') => {
      const { privateKey } = await generateKeyPair('ES256');
      const header = { alg, kid: randomUUID(), typ: 'at+jwt' };
      if (alg === 'ES256')
        return new SignJWT({ sub: 'u1' }).setProtectedHeader(header).setIssuedAt().setExpirationTime('5m').sign(privateKey);
      // Any other algorithm is refused before a key is looked up: only its header matters here.
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${encode(header)}.${encode({ sub: 'u1' })}.c2lnbmF0dXJl`;
    };

    test('a rotated-in key is read on its first token, and signs here from then on', async () => {
      const ring = await SigningKeyRing.open(database.db, TABLE, { now: clock.now, unknownKidIntervalMs: INTERVAL_MS });
      const before = ring.current.kid;
      assert.ok(await verify(ring, await signToken(ring.current, PROFILE, { sub: 'u1' }, 300, clock.now())));
      await rotateSigningKeys(database.db, TABLE);
      const reads = ring.reads;
      const payload = await verify(ring, await signedElsewhere());
      assert.equal(payload?.sub, 'u1', 'accepted without a restart');
      assert.equal(ring.reads, reads + 1);
      assert.notEqual(ring.current.kid, before, 'the newest key signs now');
      assert.deepEqual(
        ring.current.publicJwks.keys.map((key) => key.kid),
        [before, ring.current.kid],
        'and the old one still verifies',
      );
    });

    test('tokens of unknown kids cause one read per interval, are refused at once in between, and share a read under way', async () => {
      const ring = await SigningKeyRing.open(database.db, TABLE, { now: clock.now, unknownKidIntervalMs: INTERVAL_MS });
      clock.advance(INTERVAL_MS);
      let reads = ring.reads;
      // A flood at one moment: the reads under way are shared, so one in all.
      const flood = await Promise.all(Array.from({ length: 50 }, async () => verify(ring, await forged())));
      assert.deepEqual(flood, Array(50).fill(undefined));
      assert.equal(ring.reads, reads + 1);
      reads = ring.reads;
      // Within the interval: refused with no read at all.
      clock.advance(INTERVAL_MS - 1);
      assert.equal(await verify(ring, await forged()), undefined);
      assert.equal(ring.reads, reads);
      // A real new key whose first token comes within the interval waits for the next one.
      await rotateSigningKeys(database.db, TABLE);
      const real = await signedElsewhere();
      assert.equal(await verify(ring, real), undefined);
      assert.equal(ring.reads, reads);
      clock.advance(1);
      assert.equal((await verify(ring, real))?.sub, 'u1');
      assert.equal(ring.reads, reads + 1);
      // Known kids never read.
      for (let i = 0; i < 10; i++) assert.ok(await verify(ring, real));
      assert.equal(ring.reads, reads + 1);
    });

    test('the algorithm stays pinned: another one is refused before any read, and a stored key of another is never used', async () => {
      const ring = await SigningKeyRing.open(database.db, TABLE, { now: clock.now, unknownKidIntervalMs: INTERVAL_MS });
      clock.advance(INTERVAL_MS);
      const reads = ring.reads;
      assert.equal(await verify(ring, await forged('HS256')), undefined);
      assert.equal(await verify(ring, await forged('none')), undefined);
      assert.equal(ring.reads, reads, 'no read for a token of another algorithm');

      const kid = randomUUID();
      await database.db
        .insertInto(TABLE)
        .values({
          kid,
          algorithm: 'HS256',
          private_jwk: JSON.stringify({ kty: 'oct', k: 'c2VjcmV0' }),
          created_at: new Date(Date.now() + 60_000).toISOString(),
        })
        .execute();
      await ring.reload();
      assert.ok(!ring.current.publicKeys.has(kid));
      assert.notEqual(ring.current.kid, kid, 'never signs with it');
      await database.db.deleteFrom(TABLE).where('kid', '=', kid).execute();
    });

    test('reloads asked for while one is under way get one more read after it, not one each', async () => {
      const ring = await SigningKeyRing.open(database.db, TABLE, { now: clock.now });
      const reads = ring.reads;
      await Promise.all([ring.reload(), ring.reload(), ring.reload(), ring.reload()]);
      assert.equal(ring.reads, reads + 2);
    });
  });
}
