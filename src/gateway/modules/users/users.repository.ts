import { sql, type ExpressionBuilder, type Expression, type SqlBool, type Kysely } from 'kysely';
import type { DialectName } from '../../../shared/db/database.js';
import type { GatewaySchema, UsersTable } from '../../db/schema.js';
import type { FilterCondition, SortKey } from './user-filter.js';

/** The columns a user row shows to clients; never the password hash. */
export const PUBLIC_USER_COLUMNS = [
  'users.id',
  'users.no_pegawai',
  'users.nama',
  'users.email',
  'users.tipe_pegawai',
  'users.hak_akses_id',
  'users.created_at',
  'users.updated_at',
] as const;

type UsersEb = ExpressionBuilder<GatewaySchema, 'users'>;

export class UsersRepository {
  constructor(
    private readonly db: Kysely<GatewaySchema>,
    private readonly dialect: DialectName,
  ) {}

  findByNoPegawai(noPegawai: string) {
    return this.db.selectFrom('users').selectAll().where('no_pegawai', '=', noPegawai).executeTakeFirst();
  }

  findByEmail(email: string) {
    return this.db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  findById(id: string) {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A user with their access right, as get-by-id and profile show it. */
  findWithHakAkses(id: string) {
    return this.db
      .selectFrom('users')
      .innerJoin('hak_akses', 'hak_akses.id', 'users.hak_akses_id')
      .select([...PUBLIC_USER_COLUMNS, 'hak_akses.nama as hak_akses_nama', 'hak_akses.is_admin'])
      .where('users.id', '=', id)
      .executeTakeFirst();
  }

  insert(user: UsersTable, db: Kysely<GatewaySchema> = this.db) {
    return db.insertInto('users').values(user).execute();
  }

  update(id: string, changes: Partial<Omit<UsersTable, 'id' | 'created_at'>>, db: Kysely<GatewaySchema> = this.db) {
    return db.updateTable('users').set(changes).where('id', '=', id).executeTakeFirst();
  }

  delete(id: string, db: Kysely<GatewaySchema> = this.db) {
    return db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
  }

  async countAdmins(db: Kysely<GatewaySchema> = this.db): Promise<number> {
    const row = await db
      .selectFrom('users')
      .innerJoin('hak_akses', 'hak_akses.id', 'users.hak_akses_id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('hak_akses.is_admin', '=', 1)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async countAll(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** One page of users and the total matching the filter; every value is a bound parameter. */
  async list(filter: readonly FilterCondition[], sort: readonly SortKey[], page: number, perPage: number) {
    const where = (eb: UsersEb) => eb.and(filter.map((condition) => this.condition(eb, condition)));
    const totalRow = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where(where)
      .executeTakeFirstOrThrow();
    let query = this.db.selectFrom('users').select(PUBLIC_USER_COLUMNS).where(where);
    for (const key of sort) query = query.orderBy(`users.${key.column}`, key.direction);
    const rows = await query
      .orderBy('users.id')
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute();
    return { rows, total: Number(totalRow.count) };
  }

  private condition(eb: UsersEb, { column, operator, values }: FilterCondition): Expression<SqlBool> {
    const ref = sql.ref(`users.${column}`);
    const value = values[0] ?? '';
    // Substring tests use instr/strpos, not LIKE, so `%` and `_` in a value are plain characters,
    // and so that `like` is case sensitive on SQLite too (its LIKE ignores ASCII case).
    const position = this.dialect === 'sqlite' ? 'instr' : 'strpos';
    switch (operator) {
      case 'like':
        return sql<SqlBool>`${sql.raw(position)}(${ref}, ${value}) > 0`;
      case 'ilike':
        return sql<SqlBool>`${sql.raw(position)}(lower(${ref}), lower(${value})) > 0`;
      case 'in':
        return eb(`users.${column}`, 'in', values);
      default:
        return eb(`users.${column}`, operator, value);
    }
  }
}
