import type { FastifyBaseLogger } from 'fastify';
import { generatePassword } from '../shared/auth/password-policy.js';
import type { LogsConfig } from './config.js';
import { ADMIN_ROLE_ID, DEFAULT_TENANT_ID } from './modules/rbac/permissions.js';
import type { LogsUsersRepository } from './modules/users/users.repository.js';
import type { LogsUsersService } from './modules/users/users.service.js';

/**
 * Creates the first logs-console administrator (built-in `admin` role, every permission) in the
 * default tenant when there is no user at all. A generated password is printed once to the console
 * (never to the structured log).
 */
export async function ensureFirstLogsAdmin(
  config: LogsConfig,
  users: LogsUsersRepository,
  service: LogsUsersService,
  log: FastifyBaseLogger,
): Promise<void> {
  if ((await users.countAll()) > 0) return;
  const password = config.admin.password ?? generatePassword();
  try {
    await service.create(
      DEFAULT_TENANT_ID,
      { username: config.admin.username, email: `${config.admin.username}@gerbang.local`, password, roles: [ADMIN_ROLE_ID] },
      null,
      { ip: '127.0.0.1' },
    );
  } catch (error) {
    // Another instance starting on the same database created it first.
    if (await users.findByUsername(config.admin.username)) return;
    throw error;
  }
  log.info({ username: config.admin.username }, 'created the first logs administrator');
  if (!config.admin.password) {
    process.stderr.write(`\n  Logs administrator: username "${config.admin.username}", password "${password}" (shown once)\n\n`);
  }
}
