import { randomUUID } from 'node:crypto';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsTenantsTable } from '../../db/schema.js';
import { invalidBody } from '../../http/errors.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client, LogsAuthContext } from '../auth/authenticate.js';
import { DEFAULT_TENANT_ID } from '../rbac/permissions.js';
import type { TenantsRepository } from './tenants.repository.js';
import { dict, type Dict } from '../../../shared/dict.js';

export interface TenantView {
  id: string;
  name: string;
  /** Effective retention in days (the tenant's own, or the default). */
  retention_days: number;
  created_at: string;
  updated_at: string;
}

const DAY_MS = 86_400_000;

/** Something that keeps a tenant's data by time: the log store, the spans, the metric points. */
export interface TenantData {
  /** Removes the tenant's items older than `before` (epoch ms); returns how many went. */
  removeOlderThan(tenantId: string, before: number): Promise<number>;
}

export interface TenantsServiceDeps {
  tenants: TenantsRepository;
  /** Everything that holds tenant data by time: retention and tenant deletion apply to each. */
  data: readonly TenantData[];
  audit: LogsAuditRepository;
  defaultRetentionDays: number;
  now: () => number;
}

/** Tenants (tenants:manage). Audit rows of tenant changes go to the actor's own tenant. */
export class TenantsService {
  constructor(private readonly deps: TenantsServiceDeps) {}

  private view(row: LogsTenantsTable): TenantView {
    return {
      id: row.id,
      name: row.name,
      retention_days: row.retention_days ?? this.deps.defaultRetentionDays,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  async list(): Promise<TenantView[]> {
    return (await this.deps.tenants.list()).map((row) => this.view(row));
  }

  async get(id: string): Promise<TenantView> {
    const row = await this.deps.tenants.find(id);
    if (!row) throw new AppError('LOGS_NOT_FOUND');
    return this.view(row);
  }

  async create(input: { name: string; retention_days?: number | undefined }, actor: LogsAuthContext, client: Client): Promise<TenantView> {
    if (await this.deps.tenants.findByName(input.name)) throw invalidBody(`tenant "${input.name}" already exists`);
    const at = new Date(this.deps.now()).toISOString();
    const row: LogsTenantsTable = {
      id: randomUUID(),
      name: input.name,
      retention_days: input.retention_days ?? null,
      created_at: at,
      updated_at: at,
    };
    await this.deps.tenants.insert(row);
    await this.deps.audit.record({
      tenantId: actor.homeTenantId,
      action: 'tenant.create',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'tenant',
      targetId: row.id,
      ...client,
      details: { name: row.name, retention_days: input.retention_days },
    });
    return this.view(row);
  }

  async update(
    id: string,
    input: { name?: string | undefined; retention_days?: number | null | undefined },
    actor: LogsAuthContext,
    client: Client,
  ): Promise<TenantView> {
    const row = await this.deps.tenants.find(id);
    if (!row) throw new AppError('LOGS_NOT_FOUND');
    const changes: Partial<LogsTenantsTable> = { updated_at: new Date(this.deps.now()).toISOString() };
    if (input.name !== undefined && input.name !== row.name) {
      if (await this.deps.tenants.findByName(input.name)) throw invalidBody(`tenant "${input.name}" already exists`);
      changes.name = input.name;
    }
    if (input.retention_days !== undefined) changes.retention_days = input.retention_days;
    await this.deps.tenants.update(id, changes);
    await this.deps.audit.record({
      tenantId: actor.homeTenantId,
      action: 'tenant.update',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'tenant',
      targetId: id,
      ...client,
      details: { name: input.name, retention_days: input.retention_days },
    });
    return this.view({ ...row, ...changes });
  }

  /** Only an empty tenant (no users) that is neither the default nor the caller's own; its logs, spans and metric points go with it. */
  async delete(id: string, actor: LogsAuthContext, client: Client): Promise<void> {
    const row = await this.deps.tenants.find(id);
    if (!row) throw new AppError('LOGS_NOT_FOUND');
    if (id === DEFAULT_TENANT_ID || id === actor.homeTenantId)
      throw invalidBody('the default tenant and your own tenant cannot be deleted');
    if ((await this.deps.tenants.countUsers(id)) > 0) throw invalidBody('the tenant still has users');
    for (const data of this.deps.data) await data.removeOlderThan(id, Number.MAX_SAFE_INTEGER);
    await this.deps.tenants.delete(id);
    await this.deps.audit.record({
      tenantId: actor.homeTenantId,
      action: 'tenant.delete',
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'tenant',
      targetId: id,
      ...client,
      details: { name: row.name },
    });
  }

  /**
   * Applies each tenant's retention to its logs, spans and metric points: what is older than its
   * days is removed (the log store drops whole day chunks). Returns items removed per tenant.
   */
  async applyRetention(): Promise<Dict<number>> {
    const removed = dict<number>();
    for (const tenant of await this.deps.tenants.list()) {
      const cutoff = this.deps.now() - (tenant.retention_days ?? this.deps.defaultRetentionDays) * DAY_MS;
      let count = 0;
      for (const data of this.deps.data) count += await data.removeOlderThan(tenant.id, cutoff);
      removed[tenant.id] = count;
    }
    return removed;
  }
}
