import { api, send } from '../api.js';
import type { Me, Role, RolesResponse, Tenant, TenantsResponse, User, UsersResponse } from '../api-types.js';
import { el, tabs } from '../dom.js';
import { problem } from '../feedback.js';
import type { FieldSpec, FormValues } from '../forms.js';
import { time } from '../format.js';
import { words } from '../i18n.js';
import type { PageContext, View } from '../page.js';
import { managedList } from './managed-list.js';

/**
 * Administration: tenants (tenants:manage), users (users:manage) and roles (roles:manage), each
 * created, changed and deleted through the API, within the tenant chosen in the header.
 */

const list = (value: string | string[] | undefined): string[] =>
  Array.isArray(value)
    ? value
    : (value ?? '')
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);

/** Every permission there is: the built-in admin role holds them all (also ones added later). */
async function knownPermissions(ctx: PageContext, roles: Role[] | null): Promise<string[]> {
  const admin = roles?.find((role) => role.builtin && role.name === 'admin');
  if (admin) return admin.permissions;
  const me = await api<Me>('/api/me');
  return me.permissions.filter((permission) => ctx.can(permission));
}

export function renderAdmin(ctx: PageContext): View {
  const t = words();
  const views: [string, string][] = [];
  if (ctx.can('users:manage')) views.push(['users', t.users]);
  if (ctx.can('roles:manage')) views.push(['roles', t.roles]);
  if (ctx.can('tenants:manage')) views.push(['tenants', t.tenants]);
  const view = views.some(([key]) => key === ctx.params.get('view')) ? ctx.params.get('view')! : views[0]![0];
  const content = el('div', { id: 'admin-content' });
  const node = el('div', { id: 'admin-page' }, el('h2', { textContent: t.admin }), tabs(t.admin, 'admin', views, view), content);
  void (async () => {
    if (view === 'tenants') content.replaceChildren(tenants());
    else if (view === 'roles')
      content.replaceChildren(rolesList(await knownPermissions(ctx, (await api<RolesResponse>('/api/roles')).roles)));
    else {
      // A users:manage holder without roles:manage cannot list roles: role names are then typed.
      const roles = ctx.can('roles:manage') ? (await api<RolesResponse>('/api/roles')).roles : null;
      content.replaceChildren(users(roles));
    }
  })().catch((error: unknown) => content.replaceChildren(problem(error)));
  return { node };
}

function tenants(): HTMLElement {
  const t = words();
  const fields = (): FieldSpec[] => [
    { name: 'name', label: t.colName, required: true },
    { name: 'retention_days', label: t.retentionDays, type: 'number', hint: t.retentionHint },
  ];
  const body = (values: FormValues, empty: null | undefined) => ({
    name: values.name,
    retention_days: values.retention_days === '' ? empty : Number(values.retention_days),
  });
  return managedList<Tenant>({
    id: 'tenants',
    title: t.tenants,
    noun: t.tenantNoun,
    rows: async () => (await api<TenantsResponse>('/api/tenants')).tenants,
    columns: [
      ['id', (r) => r.id],
      [t.colName, (r) => r.name],
      [t.retentionDays, (r) => r.retention_days],
      [t.colCreated, (r) => time(r.created_at)],
    ],
    name: (r) => r.name,
    fields,
    values: (r) => ({ name: r.name, retention_days: String(r.retention_days) }),
    create: (values) => send('POST', '/api/tenants', body(values, undefined)),
    update: (row, values) => send('PUT', `/api/tenants/${encodeURIComponent(row.id)}`, body(values, null)),
    remove: (row) => send('DELETE', `/api/tenants/${encodeURIComponent(row.id)}`),
    aliases: { tenant: 'name', retention: 'retention_days' },
  });
}

function users(roles: Role[] | null): HTMLElement {
  const t = words();
  const roleField = (): FieldSpec =>
    roles
      ? { name: 'roles', label: t.roles, type: 'checkboxes', options: roles.map((role) => [role.name, role.name]) }
      : { name: 'roles', label: t.roles, hint: t.rolesHint };
  return managedList<User>({
    id: 'users',
    title: t.users,
    noun: t.userNoun,
    rows: async () => (await api<UsersResponse>('/api/users')).users,
    columns: [
      [t.user, (r) => r.username],
      ['e-mail', (r) => r.email],
      [t.roles, (r) => r.roles.join(', ')],
      [t.colCreated, (r) => time(r.created_at)],
    ],
    name: (r) => r.username,
    fields: (row) => [
      ...(row ? [] : [{ name: 'username', label: t.user, required: true, autocomplete: 'off' } satisfies FieldSpec]),
      { name: 'email', label: 'e-mail', type: 'email', required: true },
      {
        name: 'password',
        label: t.pass,
        type: 'password',
        autocomplete: 'new-password',
        hint: row ? t.passwordKeep : t.passwordRules,
        required: !row,
      },
      roleField(),
    ],
    values: (r) => ({ email: r.email, roles: roles ? r.roles : r.roles.join(', ') }),
    create: (values) =>
      send('POST', '/api/users', { username: values.username, email: values.email, password: values.password, roles: list(values.roles) }),
    update: (row, values) =>
      send('PUT', `/api/users/${encodeURIComponent(row.id)}`, {
        email: values.email,
        roles: list(values.roles),
        ...(values.password ? { password: values.password } : {}),
      }),
    remove: (row) => send('DELETE', `/api/users/${encodeURIComponent(row.id)}`),
    aliases: { role: 'roles', username: 'username', email: 'email', password: 'password' },
  });
}

function rolesList(permissions: string[]): HTMLElement {
  const t = words();
  return managedList<Role>({
    id: 'roles',
    title: t.roles,
    noun: t.roleNoun,
    rows: async () => (await api<RolesResponse>('/api/roles')).roles,
    columns: [
      [t.colName, (r) => r.name],
      [t.permissions, (r) => r.permissions.join(', ')],
    ],
    name: (r) => r.name,
    fixed: (r) => r.builtin,
    fields: () => [
      { name: 'name', label: t.colName, required: true },
      { name: 'permissions', label: t.permissions, type: 'checkboxes', options: permissions.map((p) => [p, p]) },
    ],
    values: (r) => ({ name: r.name, permissions: r.permissions }),
    create: (values) => send('POST', '/api/roles', { name: values.name, permissions: list(values.permissions) }),
    update: (row, values) =>
      send('PUT', `/api/roles/${encodeURIComponent(row.id)}`, { name: values.name, permissions: list(values.permissions) }),
    remove: (row) => send('DELETE', `/api/roles/${encodeURIComponent(row.id)}`),
    aliases: { role: 'name', permission: 'permissions' },
  });
}
