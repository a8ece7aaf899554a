import type { AuditRow } from '../../shared/audit/audit-row.js';
import type { LoginFailuresTable } from '../../shared/auth/shared-rate-limiter.js';
/**
 * Kysely table types of the logs service's own tables (accounts, RBAC, audit). Every table is
 * prefixed `logs_` so the logs service can share a PostgreSQL database with the gateway. The log
 * entries themselves live in the log store's tables (modules/store). Timestamps are ISO 8601 UTC.
 */
export interface LogsTenantsTable {
  id: string;
  name: string;
  /** null = the configured default (LOGS_RETENTION_DAYS). */
  retention_days: number | null;
  created_at: string;
  updated_at: string;
}

export interface LogsRolesTable {
  id: string;
  /** null for the built-in roles, which every tenant can assign. */
  tenant_id: string | null;
  name: string;
  /** JSON array of permission names. */
  permissions: string;
  /** 1 = built-in (admin, viewer): not editable or deletable. */
  builtin: number;
  created_at: string;
  updated_at: string;
}

export interface LogsUsersTable {
  id: string;
  tenant_id: string;
  /** Unique across tenants: login takes only a username. */
  username: string;
  email: string;
  /** argon2id. */
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface LogsUserRolesTable {
  user_id: string;
  role_id: string;
}

/** A login session: the family of refresh tokens it issues. Revoked on logout or token reuse. */
export interface LogsSessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** Written at most once a minute per session (docs/logs-api.md "Sessions"). */
  last_used_at: string | null;
  ip: string | null;
  user_agent: string | null;
  /** How the person signed in: password, password+totp, password+recovery_code, passkey. */
  method: string | null;
}

export interface LogsRefreshTokensTable {
  /** SHA-256 (hex) of the opaque token: the token itself is never stored. */
  token_hash: string;
  session_id: string;
  created_at: string;
  expires_at: string;
  /** Set when exchanged; a second use means theft and revokes the session. */
  used_at: string | null;
}

export interface LogsAuditTable extends AuditRow {
  tenant_id: string;
}

export interface LogsSigningKeysTable {
  kid: string;
  algorithm: string;
  private_jwk: string;
  created_at: string;
}

export interface LogsApiKeysTable {
  id: string;
  tenant_id: string;
  /** The owner: the key acts as this user, with at most `permissions`. */
  user_id: string;
  name: string;
  /** SHA-256 of the secret, hex. */
  secret_hash: string;
  /** JSON array of permission names. */
  permissions: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** A user's TOTP secret; a second factor once confirmed. */
export interface LogsMfaTotpTable {
  user_id: string;
  /** Base32. */
  secret: string;
  created_at: string;
  confirmed_at: string | null;
  /** The step of the last accepted code: that code and older ones are refused (replay). */
  last_used_step: number | null;
}

export interface LogsMfaRecoveryCodesTable {
  user_id: string;
  /** SHA-256 hex of the normalised code. */
  digest: string;
  created_at: string;
}

/** A short-lived single-use challenge: a login awaiting its code, an enrolment, a passkey ceremony. */
export interface LogsMfaChallengesTable {
  /** SHA-256 hex of the token handed out. */
  token_hash: string;
  purpose: 'login' | 'enrolment' | 'passkey_register' | 'passkey_login';
  user_id: string | null;
  data: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  failures: number;
}

export interface LogsPasskeysTable {
  /** Credential id, base64url. */
  id: string;
  user_id: string;
  name: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** JSON array. */
  transports: string;
  created_at: string;
  last_used_at: string | null;
}

export interface LogsSavedSearchesTable {
  id: string;
  tenant_id: string;
  name: string;
  query: string;
  /** JSON: {"relative": "now-1h"} or {"from", "to"} (ISO 8601). */
  time_range: string;
  /** JSON array of field names. */
  columns: string;
  /** 'asc' | 'desc', on @timestamp. */
  sort_order: string;
  owner_id: string;
  /** The owner's username when saved (shown beside the name; users may be deleted later). */
  owner_name: string;
  created_at: string;
  updated_at: string;
}

export interface LogsSchema {
  logs_tenants: LogsTenantsTable;
  logs_roles: LogsRolesTable;
  logs_users: LogsUsersTable;
  logs_user_roles: LogsUserRolesTable;
  logs_sessions: LogsSessionsTable;
  logs_refresh_tokens: LogsRefreshTokensTable;
  logs_audit: LogsAuditTable;
  logs_signing_keys: LogsSigningKeysTable;
  /** Keys `address:<ip>` (login attempts) and `username:<name>` (login failures). */
  login_failures: LoginFailuresTable;
  logs_api_keys: LogsApiKeysTable;
  logs_mfa_totp: LogsMfaTotpTable;
  logs_mfa_recovery_codes: LogsMfaRecoveryCodesTable;
  logs_mfa_challenges: LogsMfaChallengesTable;
  logs_passkeys: LogsPasskeysTable;
  logs_saved_searches: LogsSavedSearchesTable;
}
