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
  /** Written at creation, on refresh, and at most once a minute while the session is used. */
  last_used_at: string | null;
  /** How it was signed in (SessionAuthMethod); null for sessions older than migration 0005. */
  auth_method: string | null;
}

/** How a session was signed in, as its owner sees it in the list of sessions. */
export type SessionAuthMethod = 'password' | 'password+totp' | 'recovery_code' | 'sso';

export interface UserTotpTable {
  user_id: string;
  /** Base32 shared secret. */
  secret: string;
  created_at: string;
  /** Null while the enrolment waits for its first code. */
  confirmed_at: string | null;
  /** The last accepted time step (replay refusal). */
  last_used_step: number | null;
}

export interface UserRecoveryCodesTable {
  user_id: string;
  /** SHA-256 of the normalised code. */
  digest: string;
  created_at: string;
}

export interface MfaChallengesTable {
  /** SHA-256 of the token; never the token. */
  digest: string;
  user_id: string;
  purpose: 'login' | 'enrolment';
  created_at: string;
  expires_at: string;
  failures: number;
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
  user_totp: UserTotpTable;
  user_recovery_codes: UserRecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  /** Keys `account:<no_pegawai>`, `address:<ip>` (password logins), `sso-address:<ip>` (SSO refusals). */
  login_failures: LoginFailuresTable;
}
