import type { AuditRow } from '../../shared/audit/audit-row.js';
import type { LoginFailuresTable } from '../../shared/auth/shared-rate-limiter.js';
/** Kysely table types of the gateway database. Timestamps are ISO 8601 UTC strings on both dialects. */
export interface HakAksesTable {
  id: string;
  nama: string;
  /** 1 = administrator right (may manage users), 0 = ordinary. */
  is_admin: number;
  created_at: string;
  updated_at: string;
}

export interface UsersTable {
  id: string;
  no_pegawai: string;
  nama: string;
  /** Stored lower-case; unique. */
  email: string;
  tipe_pegawai: string;
  hak_akses_id: string;
  /** argon2id; null for accounts that only sign in through SSO. */
  password_hash: string | null;
  password_changed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** `actor` is who, readable (employee number or "sso:<email>"); it survives deletion of the user. */
export type AuditLogTable = AuditRow;

export interface SigningKeysTable {
  kid: string;
  algorithm: string;
  private_jwk: string;
  created_at: string;
}

export interface SsoIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: string;
  last_login_at: string;
}

export interface SsoUsedTokensTable {
  /** sha256 of the ID token (or of issuer and jti); never the token itself. */
  token_hash: string;
  expires_at: string;
}

export interface GatewaySchema {
  hak_akses: HakAksesTable;
  users: UsersTable;
  sessions: SessionsTable;
  audit_log: AuditLogTable;
  gateway_signing_keys: SigningKeysTable;
  sso_identities: SsoIdentitiesTable;
  sso_used_tokens: SsoUsedTokensTable;
  /** Keys `account:<no_pegawai>`, `address:<ip>` (password logins), `sso-address:<ip>` (SSO refusals). */
  login_failures: LoginFailuresTable;
}
