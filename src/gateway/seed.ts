import type { FastifyBaseLogger } from 'fastify';
import { generatePassword } from '../shared/auth/password-policy.js';
import { AppError } from '../shared/errors/app-error.js';
import type { GatewayConfig } from './config.js';
import type { UsersRepository } from './modules/users/users.repository.js';
import type { UsersService } from './modules/users/users.service.js';

/**
 * Creates the first administrator when there is no user at all. A generated password is printed
 * once to the console (never to the structured log).
 */
export async function ensureFirstAdmin(
  config: GatewayConfig,
  users: UsersRepository,
  service: UsersService,
  log: FastifyBaseLogger,
): Promise<void> {
  if ((await users.countAll()) > 0) return;
  const password = config.admin.password ?? generatePassword();
  const created = await service
    .create(
      {
        no_pegawai: config.admin.noPegawai,
        nama: 'Administrator',
        email: `${config.admin.noPegawai}@gerbang.local`,
        kata_sandi: password,
        tipe_pegawai: 'pns',
        hak_akses_id: 'admin',
      },
      { id: null, name: 'system' },
      { ip: '127.0.0.1' },
      'user.seed_admin',
    )
    .then(
      () => true,
      // Another instance starting on the same database created it first.
      (error: unknown) => {
        if (error instanceof AppError && (error.code === 'NO_PEGAWAI_TAKEN' || error.code === 'EMAIL_TAKEN')) return false;
        throw error;
      },
    );
  if (!created) return;
  log.info({ no_pegawai: config.admin.noPegawai }, 'created the first gateway administrator');
  if (!config.admin.password) {
    process.stderr.write(`\n  Gateway administrator: no_pegawai "${config.admin.noPegawai}", password "${password}" (shown once)\n\n`);
  }
}
