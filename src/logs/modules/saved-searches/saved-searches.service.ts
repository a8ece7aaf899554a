import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsSavedSearchesTable } from '../../db/schema.js';
import { invalidBody } from '../../http/errors.js';
import { isUniqueViolation } from '../alerts/alerts.repository.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client, LogsAuthContext } from '../auth/authenticate.js';
import type { SavedSearchesRepository } from './saved-searches.repository.js';
import { MAX_SAVED_SEARCHES, type SavedSearch, type SavedSearchCreateBody, type SavedSearchUpdateBody } from './saved-searches.schemas.js';

type View = Static<typeof SavedSearch>;
type Range = View['range'];

const DEFAULT_RANGE: Range = { relative: 'now-1h' };

/**
 * Saved searches, shared within a tenant: every holder of `logs:read` in the tenant lists and opens
 * them and may save new ones; a saved search is renamed, changed or deleted by its owner or by a
 * user holding `users:manage` (the tenant's administrator), so one reader cannot rewrite what
 * another relies on (docs/logs-api.md, "Saved searches").
 */
export class SavedSearchesService {
  constructor(private readonly deps: { repository: SavedSearchesRepository; audit: LogsAuditRepository; now: () => number }) {}

  async list(tenantId: string, actor: LogsAuthContext): Promise<View[]> {
    const rows = await this.deps.repository.list(tenantId, MAX_SAVED_SEARCHES);
    return rows.map((row) => view(row, actor));
  }

  async get(tenantId: string, id: string, actor: LogsAuthContext): Promise<View> {
    return view(await this.rowOf(tenantId, id), actor);
  }

  async create(tenantId: string, input: Static<typeof SavedSearchCreateBody>, actor: LogsAuthContext, client: Client): Promise<View> {
    const name = input.name.trim();
    if ((await this.deps.repository.count(tenantId)) >= MAX_SAVED_SEARCHES)
      throw invalidBody(`a tenant keeps at most ${MAX_SAVED_SEARCHES} saved searches`);
    await this.ensureUniqueName(tenantId, name);
    const at = new Date(this.deps.now()).toISOString();
    const row: LogsSavedSearchesTable = {
      id: randomUUID(),
      tenant_id: tenantId,
      name,
      query: input.query ?? '',
      time_range: JSON.stringify(checkedRange(input.range ?? DEFAULT_RANGE)),
      columns: JSON.stringify(input.columns ?? []),
      sort_order: input.sort ?? 'desc',
      owner_id: actor.userId,
      owner_name: actor.username,
      created_at: at,
      updated_at: at,
    };
    try {
      await this.deps.repository.insert(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw invalidBody(`saved search "${name}" already exists`);
      throw error;
    }
    await this.record(tenantId, actor, client, 'saved_search.create', row.id, { name });
    return view(row, actor);
  }

  async update(
    tenantId: string,
    id: string,
    input: Static<typeof SavedSearchUpdateBody>,
    actor: LogsAuthContext,
    client: Client,
  ): Promise<View> {
    const row = await this.rowOf(tenantId, id);
    if (!mayEdit(row, actor)) throw new AppError('LOGS_PERMISSION_DENIED');
    const changes: Partial<LogsSavedSearchesTable> = { updated_at: new Date(this.deps.now()).toISOString() };
    if (input.name !== undefined) {
      changes.name = input.name.trim();
      await this.ensureUniqueName(tenantId, changes.name, id);
    }
    if (input.query !== undefined) changes.query = input.query;
    if (input.range !== undefined) changes.time_range = JSON.stringify(checkedRange(input.range));
    if (input.columns !== undefined) changes.columns = JSON.stringify(input.columns);
    if (input.sort !== undefined) changes.sort_order = input.sort;
    try {
      if (!(await this.deps.repository.update(tenantId, id, changes))) throw new AppError('LOGS_NOT_FOUND');
    } catch (error) {
      if (isUniqueViolation(error)) throw invalidBody(`saved search "${changes.name ?? ''}" already exists`);
      throw error;
    }
    await this.record(tenantId, actor, client, 'saved_search.update', id, { name: changes.name ?? row.name, fields: Object.keys(input) });
    return view({ ...row, ...changes }, actor);
  }

  async remove(tenantId: string, id: string, actor: LogsAuthContext, client: Client): Promise<void> {
    const row = await this.rowOf(tenantId, id);
    if (!mayEdit(row, actor)) throw new AppError('LOGS_PERMISSION_DENIED');
    if (!(await this.deps.repository.remove(tenantId, id))) throw new AppError('LOGS_NOT_FOUND');
    await this.record(tenantId, actor, client, 'saved_search.delete', id, { name: row.name });
  }

  private async rowOf(tenantId: string, id: string): Promise<LogsSavedSearchesTable> {
    const row = await this.deps.repository.find(tenantId, id);
    if (!row) throw new AppError('LOGS_NOT_FOUND');
    return row;
  }

  private async ensureUniqueName(tenantId: string, name: string, except?: string): Promise<void> {
    const existing = await this.deps.repository.findByName(tenantId, name);
    if (existing && existing.id !== except) throw invalidBody(`saved search "${name}" already exists`);
  }

  private async record(
    tenantId: string,
    actor: LogsAuthContext,
    client: Client,
    action: string,
    id: string,
    details: Record<string, unknown>,
  ) {
    await this.deps.audit.record({
      tenantId,
      action,
      outcome: 'success',
      ...auditActor(actor),
      targetType: 'saved_search',
      targetId: id,
      ...client,
      details,
    });
  }
}

/** The owner, or the tenant's administrator (users:manage). */
function mayEdit(row: LogsSavedSearchesTable, actor: LogsAuthContext): boolean {
  return row.owner_id === actor.userId || actor.permissions.has('users:manage');
}

/** An absolute range runs forwards. */
function checkedRange(range: Range): Range {
  if ('from' in range && Date.parse(range.from) >= Date.parse(range.to)) throw invalidBody('range: from must be before to');
  return range;
}

function view(row: LogsSavedSearchesTable, actor: LogsAuthContext): View {
  return {
    id: row.id,
    name: row.name,
    query: row.query,
    range: JSON.parse(row.time_range) as Range,
    columns: JSON.parse(row.columns) as string[],
    sort: row.sort_order === 'asc' ? 'asc' : 'desc',
    owner: { id: row.owner_id, username: row.owner_name },
    created_at: row.created_at,
    updated_at: row.updated_at,
    can_edit: mayEdit(row, actor),
  };
}
