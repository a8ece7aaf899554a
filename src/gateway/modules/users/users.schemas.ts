import { Type } from 'typebox';

export const TIPE_PEGAWAI = ['pns', 'pjlp', 'bpjs'] as const;

const Id = Type.String({ format: 'uuid' });
const NoPegawai = Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S(.*\\S)?$' });
const Nama = Type.String({ minLength: 1, maxLength: 200 });
const Email = Type.String({ format: 'email', maxLength: 254 });
const TipePegawai = Type.Union(TIPE_PEGAWAI.map((t) => Type.Literal(t)));
const HakAksesId = Type.String({ minLength: 1, maxLength: 64 });
/** Length and character rules are checked by the password policy, for a message naming the rule. */
export const Password = Type.String({ maxLength: 1024 });
const Timestamp = Type.String({ format: 'date-time' });

/** The user as login returns it (spec 4.1). */
export const UserSummary = Type.Object({
  id: Type.String(),
  no_pegawai: Type.String(),
  nama: Type.String(),
  email: Type.String(),
  tipe_pegawai: Type.String(),
  hak_akses_id: Type.String(),
});

/** The user as the list returns it (spec 4.2). */
export const UserListItem = Type.Object({ ...UserSummary.properties, created_at: Timestamp, updated_at: Timestamp });

export const HakAksesRef = Type.Object({ id: Type.String(), nama: Type.String() });

/** Profile (spec 4.1): the summary less hak_akses_id, plus the hak_akses object. */
export const Profile = Type.Object({
  id: Type.String(),
  no_pegawai: Type.String(),
  nama: Type.String(),
  email: Type.String(),
  tipe_pegawai: Type.String(),
  hak_akses: HakAksesRef,
});

/** Get-by-id (spec 4.2): everything, with the hak_akses object and timestamps. */
export const UserDetail = Type.Object({ ...UserListItem.properties, hak_akses: HakAksesRef });

export const UserRef = Type.Object({ id: Type.String(), no_pegawai: Type.String(), nama: Type.String() });

export const IdParams = Type.Object({ id: Id });

export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'At most 100' }),
  filter: Type.Optional(
    Type.String({
      maxLength: 2000,
      description: 'column,operator,value joined by ; (operators: = like ilike > < >= <= <> in; in-values joined by |)',
    }),
  ),
  sort: Type.Optional(Type.String({ maxLength: 200, description: 'column[,asc|desc] joined by ; (default created_at,desc)' })),
});

export const CreateUserBody = Type.Object(
  { no_pegawai: NoPegawai, nama: Nama, email: Email, kata_sandi: Password, tipe_pegawai: TipePegawai, hak_akses_id: HakAksesId },
  { additionalProperties: false },
);

/**
 * Spec 4.2 lists hak_akses_id here too; it is dropped like any unknown field (no mass assignment):
 * access rights change only through PUT /:id/hak-akses, which is audited as such.
 */
export const UpdateUserBody = Type.Object(
  { nama: Type.Optional(Nama), email: Type.Optional(Email), tipe_pegawai: Type.Optional(TipePegawai) },
  { additionalProperties: false },
);

export const ResetPasswordBody = Type.Object({ kata_sandi: Password }, { additionalProperties: false });
export const HakAksesBody = Type.Object({ hak_akses_id: HakAksesId }, { additionalProperties: false });
