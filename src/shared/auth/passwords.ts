import { hash, verify, Algorithm } from '@node-rs/argon2';

/** OWASP argon2id parameters: 19 MiB, 2 passes, 1 lane. @node-rs/argon2 hashes on its own thread pool. */
const OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/**
 * argon2 verifications done by this process (the dummy's included): what a login costs, for the
 * test that an answer's work does not depend on whether the account exists or what it requires.
 */
export const passwordWork = { verifications: 0 };

/** Verifies against a stored hash; a malformed hash counts as a mismatch. */
export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  passwordWork.verifications += 1;
  try {
    return await verify(storedHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Burns the same time as a real verification, for unknown accounts, so that response time does
 * not tell which accounts exist.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('gerbang-dummy-password-Aa1!');
  await verifyPassword(await dummyHash, password);
  return false;
}
