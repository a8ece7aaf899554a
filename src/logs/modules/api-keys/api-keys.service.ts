import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsApiKeysTable, LogsSchema } from '../../db/schema.js';
import { invalidBody } from '../../http/errors.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client } from '../auth/client.js';
import { isPermission, type Permission } from '../rbac/permissions.js';
import { assertCanActOnUser, assertWithinActor } from '../rbac/privilege.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { ApiKeysRepository } from './api-keys.repository.js';

/** Who asks, as the guards resolved them. */
export interface KeyActor {
  readonly userId: string;
  readonly username: string;
  readonly permissions: ReadonlySet<Permission>;
  /** Set when the request itself came with an API key. */
  readonly apiKeyId?: string | undefined;
}

export interface ApiKeyView {
  id: string;
  name: string;
  tenant_id: string;
  user_id: string;
  permissions: Permission[];
  created_by: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface CreatedApiKey extends ApiKeyView {
  /** The secret: shown once, never stored. */
  api_key: string;
  /** `base64(id:api_key)`, for `Authorization: ApiKey <encoded>` (Elasticsearch's convention). */
  encoded: string;
}

export interface ApiKeysDeps {
  db: Kysely<LogsSchema>;
  keys: ApiKeysRepository;
  users: LogsUsersRepository;
  audit: LogsAuditRepository;
  now: () => number;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();
/** Compared against when the id is unknown, so a miss costs what a hit costs. */
const DUMMY_HASH = sha256('no such key');
/** The last use is written at most this often per key. */
const TOUCH_EVERY_MS = 60_000;

export function keyPermissions(row: LogsApiKeysTable): Permission[] {
  const parsed = JSON.parse(row.permissions) as unknown;
  return Array.isArray(parsed) ? parsed.filter((p): p is Permission => typeof p === 'string' && isPermission(p)) : [];
}

function view(row: LogsApiKeysTable): ApiKeyView {
  const { secret_hash: _secret, permissions: _permissions, ...rest } = row;
  return { ...rest, permissions: keyPermissions(row) };
}

/**
 * API keys (docs/logs-api.md "API keys"): created by a user for themselves, or by a users:manage
 * holder for a user of the tenant no more powerful than themselves (who alone may also revoke
 * that user's keys); at most the creator's permissions; optional expiry; the secret
 * shown once and stored as a SHA-256 hash; revocable; last use recorded; create and revoke audited.
 */
export class ApiKeysService {
  constructor(private readonly deps: ApiKeysDeps) {}

  async create(
    tenantId: string,
    input: { name: string; permissions: string[]; expires_at?: string | undefined; user_id?: string | undefined },
    actor: KeyActor,
    client: Client,
  ): Promise<CreatedApiKey> {
    // A key cannot mint keys: a leaked key must not outlive its own revocation.
    if (actor.apiKeyId !== undefined) throw new AppError('LOGS_PERMISSION_DENIED');
    const unknown = input.permissions.filter((name) => !isPermission(name));
    if (unknown.length > 0) throw invalidBody(`unknown permission: ${unknown.slice(0, 5).join(', ')}`);
    const permissions = [...new Set(input.permissions as Permission[])];
    assertWithinActor(actor, permissions);
    const ownerId = input.user_id ?? actor.userId;
    if (ownerId !== actor.userId) {
      if (!actor.permissions.has('users:manage')) throw new AppError('LOGS_PERMISSION_DENIED');
      const owner = await this.deps.users.findById(ownerId);
      if (!owner || owner.tenant_id !== tenantId) throw new AppError('LOGS_NOT_FOUND');
      await assertCanActOnUser(actor, this.deps.users, ownerId);
    }
    const now = this.deps.now();
    let expiresAt: string | null = null;
    if (input.expires_at !== undefined) {
      const ms = Date.parse(input.expires_at);
      if (Number.isNaN(ms)) throw invalidBody('expires_at must be an ISO 8601 time');
      if (ms <= now) throw invalidBody('expires_at must be in the future');
      expiresAt = new Date(ms).toISOString();
    }
    const id = randomBytes(15).toString('base64url');
    const secret = randomBytes(32).toString('base64url');
    const row: LogsApiKeysTable = {
      id,
      tenant_id: tenantId,
      user_id: ownerId,
      name: input.name,
      secret_hash: sha256(secret).toString('hex'),
      permissions: JSON.stringify(permissions),
      created_by: actor.userId,
      created_at: new Date(now).toISOString(),
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.keys.insert(row, trx);
      await this.deps.audit.record(
        {
          tenantId,
          action: 'api_key.create',
          outcome: 'success',
          ...auditActor(actor),
          targetType: 'api_key',
          targetId: id,
          ...client,
          details: { name: row.name, owner: ownerId, permissions, expires_at: expiresAt },
        },
        trx,
      );
    });
    return { ...view(row), api_key: secret, encoded: Buffer.from(`${id}:${secret}`).toString('base64') };
  }

  /** The caller's own keys, or another user's for a users:manage holder. */
  async list(tenantId: string, actor: KeyActor, userId: string | undefined): Promise<ApiKeyView[]> {
    const owner = userId ?? actor.userId;
    if (owner !== actor.userId && !actor.permissions.has('users:manage')) throw new AppError('LOGS_PERMISSION_DENIED');
    return (await this.deps.keys.list(tenantId, owner)).map(view);
  }

  async revoke(tenantId: string, id: string, actor: KeyActor, client: Client): Promise<ApiKeyView> {
    const row = await this.deps.keys.find(id);
    if (!row || row.tenant_id !== tenantId) throw new AppError('LOGS_NOT_FOUND');
    if (row.user_id !== actor.userId) {
      if (!actor.permissions.has('users:manage')) throw new AppError('LOGS_NOT_FOUND');
      await assertCanActOnUser(actor, this.deps.users, row.user_id);
    }
    if (row.revoked_at !== null) return view(row);
    const at = new Date(this.deps.now()).toISOString();
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.keys.revoke(id, at, trx);
      await this.deps.audit.record(
        { tenantId, action: 'api_key.revoke', outcome: 'success', ...auditActor(actor), targetType: 'api_key', targetId: id, ...client },
        trx,
      );
    });
    return view({ ...row, revoked_at: at });
  }

  /**
   * The key named by `encoded` (`base64(id:secret)`), when it is valid now; undefined otherwise, after
   * the same work whether the id exists or not. Records the last use.
   */
  async verify(encoded: string): Promise<LogsApiKeysTable | undefined> {
    if (encoded.length > 512) return undefined;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const id = colon > 0 ? decoded.slice(0, colon) : '';
    const secret = colon > 0 ? decoded.slice(colon + 1) : '';
    const row = /^[A-Za-z0-9_-]{1,64}$/.test(id) ? await this.deps.keys.find(id) : undefined;
    const stored = row ? Buffer.from(row.secret_hash, 'hex') : DUMMY_HASH;
    const matches = stored.length === 32 && timingSafeEqual(sha256(secret), stored);
    if (!row || !matches || row.revoked_at !== null) return undefined;
    const now = this.deps.now();
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) return undefined;
    if (row.last_used_at === null || Date.parse(row.last_used_at) + TOUCH_EVERY_MS <= now) {
      await this.deps.keys.touch(row.id, new Date(now).toISOString());
    }
    return row;
  }
}
