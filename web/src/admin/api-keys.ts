import { api, send } from '../api.js';
import type { ApiKey, ApiKeyCreated, ApiKeysResponse, UsersResponse } from '../api-types.js';
import { button, el } from '../dom.js';
import { into } from '../feedback.js';
import { time } from '../format.js';
import { words } from '../i18n.js';
import { changed, type PageContext, type View } from '../page.js';
import { managedList } from './managed-list.js';
import { inputTime, zoneName } from '../time-zone.js';

/**
 * API keys for shippers and data sources (docs/logs-api.md): any signed-in user's own, or with
 * users:manage another user's of the tenant. A key holds some of its creator's permissions; its
 * secret is shown once, in the answer to its creation, and never again; revoking ends it at once.
 */

export function renderApiKeys(ctx: PageContext, myPermissions: string[]): View {
  const t = words();
  const owner = ctx.params.get('user') ?? '';
  const content = el('div', { id: 'keys-content' });
  const node = el(
    'div',
    { id: 'keys-page' },
    el('h2', { textContent: t.apiKeys }),
    el('p', { className: 'muted', textContent: t.apiKeysIntro }),
    content,
  );

  void into(content, async () => {
    let picker: HTMLElement | null = null;
    if (ctx.can('users:manage')) {
      const { users } = await api<UsersResponse>('/api/users');
      const select = el(
        'select',
        { id: 'keys-user' },
        el('option', { value: '', textContent: t.myKeys }),
        ...users.map((u) => el('option', { value: u.id, textContent: u.username })),
      );
      select.value = owner;
      select.addEventListener('change', () => ctx.navigate(changed(ctx.params, { user: select.value })));
      picker = el('div', { className: 'toolbar' }, el('label', { htmlFor: 'keys-user', textContent: t.keysOf }), select);
    }
    const query = owner ? `?${new URLSearchParams({ user_id: owner }).toString()}` : '';
    const list = managedList<ApiKey>({
      id: 'keys',
      title: t.apiKeys,
      noun: t.apiKey,
      rows: async () => (await api<ApiKeysResponse>(`/api/v1/api-keys${query}`)).api_keys,
      columns: [
        [t.colName, (k) => k.name],
        ['id', (k) => el('code', { textContent: k.id })],
        [t.permissions, (k) => k.permissions.join(', ')],
        [t.colCreated, (k) => time(k.created_at)],
        [t.expires, (k) => (k.expires_at ? time(k.expires_at) : t.never)],
        [t.lastUsed, (k) => time(k.last_used_at)],
        [t.colStatus, (k) => (k.revoked_at ? `${t.revoked} ${time(k.revoked_at)}` : t.activeState)],
      ],
      name: (k) => k.name,
      // Revoked keys stay listed (who had what, until when) and can do nothing more.
      fixed: (k) => k.revoked_at !== null,
      fixedLabel: '–',
      fields: () => [
        { name: 'name', label: t.colName, required: true },
        {
          name: 'permissions',
          label: t.permissions,
          type: 'checkboxes',
          options: myPermissions.map((p) => [p, p]),
          hint: t.keyPermissionsHint,
        },
        { name: 'expires_at', label: `${t.expires} (${zoneName()})`, type: 'datetime-local', hint: t.expiresHint },
      ],
      values: (k) => ({ name: k.name, permissions: k.permissions }),
      create: (values) =>
        send('POST', '/api/v1/api-keys', {
          name: values.name,
          permissions: values.permissions,
          ...(values.expires_at ? { expires_at: inputTime(String(values.expires_at)) } : {}),
          ...(owner ? { user_id: owner } : {}),
        }),
      removeLabel: t.revoke,
      removedLabel: t.revoked,
      remove: (k) => send('DELETE', `/api/v1/api-keys/${encodeURIComponent(k.id)}`),
      aliases: { permission: 'permissions', expires: 'expires_at' },
      created: (answer) => secretOnce(answer as ApiKeyCreated),
    });
    return el('div', {}, picker, list);
  });
  return { node };
}

/** The new key's secret, this once: the header value to give a shipper, with a copy button. */
function secretOnce(key: ApiKeyCreated): HTMLElement {
  const t = words();
  const value = el('input', { id: 'new-key-secret', readOnly: true, value: `ApiKey ${key.encoded}`, className: 'secret' });
  const copied = el('span', { role: 'status', className: 'muted' });
  return el(
    'div',
    { id: 'new-key', className: 'notice' },
    el('p', { textContent: `${t.keyShownOnce} (${key.name})` }),
    el('label', { htmlFor: 'new-key-secret', textContent: 'Authorization' }),
    value,
    button(t.copy, () => {
      value.select();
      // The text is selected either way: if the clipboard is refused, Ctrl+C still copies it.
      void navigator.clipboard?.writeText(value.value).then(
        () => (copied.textContent = t.copied),
        () => undefined,
      );
    }),
    copied,
  );
}
