import type { Kysely } from 'kysely';
import type { GatewaySchema } from '../../db/schema.js';

export class HakAksesRepository {
  constructor(private readonly db: Kysely<GatewaySchema>) {}

  list() {
    return this.db.selectFrom('hak_akses').select(['id', 'nama', 'is_admin']).orderBy('nama').execute();
  }

  find(id: string) {
    return this.db.selectFrom('hak_akses').select(['id', 'nama', 'is_admin']).where('id', '=', id).executeTakeFirst();
  }
}
