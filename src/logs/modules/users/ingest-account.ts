import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../../shared/auth/passwords.js';
import { generatePassword } from '../../../shared/auth/password-policy.js';
import { DEFAULT_TENANT_ID, INGEST_ROLE_ID } from '../rbac/permissions.js';
import type { LogsUsersRepository } from './users.repository.js';

/**
 * The account a co-located shipper (the gateway under `npm start`) ingests with: role `ingest`
 * (`logs:write` only) in the default tenant. Its password is new at every start and only handed
 * to the shipper in memory, so it is never printed or stored in clear.
 */
export async function ensureIngestAccount(
  users: LogsUsersRepository,
  username: string,
  now: () => number = Date.now,
): Promise<{ username: string; password: string }> {
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  const at = new Date(now()).toISOString();
  const existing = await users.findByUsername(username);
  if (existing) {
    const roles = (await users.rolesOf([existing.id])).get(existing.id) ?? [];
    if (roles.length !== 1 || roles[0]!.id !== INGEST_ROLE_ID) {
      throw new Error(
        `the logs account "${username}" exists and is not an ingest-only account; choose another name with LOGS_GATEWAY_SHIPPER`,
      );
    }
    await users.update(existing.id, { password_hash: passwordHash, updated_at: at });
  } else {
    const id = randomUUID();
    await users.insert({
      id,
      tenant_id: DEFAULT_TENANT_ID,
      username,
      email: `${username}@gerbang.local`,
      password_hash: passwordHash,
      created_at: at,
      updated_at: at,
    });
    await users.setRoles(id, [INGEST_ROLE_ID]);
  }
  return { username, password };
}
