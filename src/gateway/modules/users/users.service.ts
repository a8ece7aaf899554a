import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { hashPassword } from '../../../shared/auth/passwords.js';
import { AppError } from '../../../shared/errors/app-error.js';
import type { GatewaySchema, UsersTable } from '../../db/schema.js';
import type { HakAksesRepository } from '../access-rights/hak-akses.repository.js';
import { auditActor, type AuditRepository } from '../audit/audit.repository.js';
import { assertPasswordAcceptable, type AuthService, type Client } from '../auth/auth.service.js';
import type { SessionsRepository } from '../auth/sessions.repository.js';
import type { AuthContext } from '../auth/tokens.js';
import { parseFilter, parseSort } from './user-filter.js';
import type { UsersRepository } from './users.repository.js';

export interface NewUser {
  no_pegawai: string;
  nama: string;
  email: string;
  kata_sandi?: string | undefined;
  tipe_pegawai: string;
  hak_akses_id: string;
}

export interface UserChanges {
  nama?: string | undefined;
  email?: string | undefined;
  tipe_pegawai?: string | undefined;
}

export interface UsersServiceDeps {
  db: Kysely<GatewaySchema>;
  users: UsersRepository;
  hakAkses: HakAksesRepository;
  sessions: SessionsRepository;
  auth: AuthService;
  audit: AuditRepository;
  now: () => number;
}

/** Rules of user management (spec 4.2). Deletion is hard: the audit trail keeps who the user was. */
export class UsersService {
  constructor(private readonly deps: UsersServiceDeps) {}

  async list(query: { page: number; per_page: number; filter?: string | undefined; sort?: string | undefined }) {
    const { rows, total } = await this.deps.users.list(parseFilter(query.filter), parseSort(query.sort), query.page, query.per_page);
    return {
      rows,
      info: { total, per_page: query.per_page, page: query.page, pages: Math.ceil(total / query.per_page), count: rows.length },
    };
  }

  async get(id: string) {
    const user = await this.deps.users.findWithHakAkses(id);
    if (!user) throw new AppError('USER_NOT_FOUND');
    const { hak_akses_nama, is_admin: _isAdmin, ...fields } = user;
    return { ...fields, hak_akses: { id: user.hak_akses_id, nama: hak_akses_nama } };
  }

  /**
   * Creates a user. A password is required for accounts made by an administrator; SSO creates
   * accounts without one. Duplicates are checked first for a clear message, and again by the
   * unique indexes for concurrent creates.
   */
  async create(
    input: NewUser,
    actor: { id: string | null; name: string | null },
    client: Client,
    action = 'user.create',
  ): Promise<UsersTable> {
    if (input.kata_sandi !== undefined) assertPasswordAcceptable(input.kata_sandi);
    const email = input.email.toLowerCase();
    await this.assertHakAksesExists(input.hak_akses_id);
    if (await this.deps.users.findByNoPegawai(input.no_pegawai)) throw new AppError('NO_PEGAWAI_TAKEN');
    if (await this.deps.users.findByEmail(email)) throw new AppError('EMAIL_TAKEN');
    const at = new Date(this.deps.now()).toISOString();
    const user: UsersTable = {
      id: randomUUID(),
      no_pegawai: input.no_pegawai,
      nama: input.nama,
      email,
      tipe_pegawai: input.tipe_pegawai,
      hak_akses_id: input.hak_akses_id,
      password_hash: input.kata_sandi === undefined ? null : await hashPassword(input.kata_sandi),
      password_changed_at: input.kata_sandi === undefined ? null : at,
      created_at: at,
      updated_at: at,
    };
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.users.insert(user, trx);
        await this.deps.audit.record(
          {
            action,
            outcome: 'success',
            actorId: actor.id,
            actor: actor.name,
            targetType: 'user',
            targetId: user.id,
            ...client,
            details: { no_pegawai: user.no_pegawai, email },
          },
          trx,
        );
      });
    } catch (error) {
      if (await this.deps.users.findByNoPegawai(input.no_pegawai)) throw new AppError('NO_PEGAWAI_TAKEN');
      if (await this.deps.users.findByEmail(email)) throw new AppError('EMAIL_TAKEN');
      throw error;
    }
    return user;
  }

  async update(id: string, changes: UserChanges, actor: AuthContext, client: Client) {
    const user = await this.mustFind(id);
    const set: Partial<UsersTable> = {};
    if (changes.nama !== undefined) set.nama = changes.nama;
    if (changes.tipe_pegawai !== undefined) set.tipe_pegawai = changes.tipe_pegawai;
    if (changes.email !== undefined && changes.email.toLowerCase() !== user.email) {
      const email = changes.email.toLowerCase();
      if (await this.deps.users.findByEmail(email)) throw new AppError('EMAIL_TAKEN');
      set.email = email;
    }
    await this.write(user, set, actor, client, 'user.update');
    return { id: user.id, no_pegawai: user.no_pegawai, nama: set.nama ?? user.nama };
  }

  async setHakAkses(id: string, hakAksesId: string, actor: AuthContext, client: Client): Promise<void> {
    const user = await this.mustFind(id);
    if (hakAksesId === user.hak_akses_id) return;
    await this.assertCanChangeHakAkses(user, hakAksesId);
    await this.write(user, { hak_akses_id: hakAksesId }, actor, client, 'user.set_hak_akses');
  }

  async delete(id: string, actor: AuthContext, client: Client): Promise<void> {
    const user = await this.mustFind(id);
    if (user.id === actor.userId) throw new AppError('CANNOT_DELETE_SELF');
    if ((await this.isAdminRight(user.hak_akses_id)) && (await this.deps.users.countAdmins()) <= 1) throw new AppError('LAST_ADMIN');
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.sessions.revokeAllOfUser(user.id, new Date(this.deps.now()).toISOString(), trx);
      await this.deps.users.delete(user.id, trx);
      await this.deps.audit.record(
        {
          action: 'user.delete',
          outcome: 'success',
          ...auditActor(actor),
          targetType: 'user',
          targetId: user.id,
          ...client,
          details: { no_pegawai: user.no_pegawai, nama: user.nama },
        },
        trx,
      );
    });
  }

  async resetPassword(id: string, password: string, actor: AuthContext, client: Client): Promise<void> {
    await this.deps.auth.resetPassword(await this.mustFind(id), password, actor, client);
  }

  private async write(user: UsersTable, set: Partial<UsersTable>, actor: AuthContext, client: Client, action: string) {
    const changed = Object.keys(set);
    if (changed.length === 0) return;
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.update(user.id, { ...set, updated_at: new Date(this.deps.now()).toISOString() }, trx);
      await this.deps.audit.record(
        {
          action,
          outcome: 'success',
          ...auditActor(actor),
          targetType: 'user',
          targetId: user.id,
          ...client,
          details: { changed: set },
        },
        trx,
      );
    });
  }

  private async mustFind(id: string): Promise<UsersTable> {
    const user = await this.deps.users.findById(id);
    if (!user) throw new AppError('USER_NOT_FOUND');
    return user;
  }

  private async assertHakAksesExists(id: string): Promise<void> {
    if (!(await this.deps.hakAkses.find(id))) throw new AppError('HAK_AKSES_UNKNOWN');
  }

  private async isAdminRight(id: string): Promise<boolean> {
    return (await this.deps.hakAkses.find(id))?.is_admin === 1;
  }

  /** The new right must exist, and the last administrator may not be demoted. */
  private async assertCanChangeHakAkses(user: UsersTable, hakAksesId: string): Promise<void> {
    await this.assertHakAksesExists(hakAksesId);
    const demoting = (await this.isAdminRight(user.hak_akses_id)) && !(await this.isAdminRight(hakAksesId));
    if (demoting && (await this.deps.users.countAdmins()) <= 1) throw new AppError('LAST_ADMIN');
  }
}
