import { api, ApiError, download } from './api.js';
import { el, table } from './dom.js';
import { words } from './i18n.js';

/** The read-only pages beside explore: alerts and rules, the audit trail with its exports, administration. */

function failed(error: unknown): HTMLElement {
  if (error instanceof ApiError && error.status === 401) window.dispatchEvent(new Event('gerbang:signed-out'));
  return el('p', { className: 'error', role: 'alert', textContent: error instanceof Error ? error.message : String(error) });
}

export async function renderAlerts(): Promise<HTMLElement> {
  const t = words();
  try {
    const [alerts, rules] = await Promise.all([
      api<{ data: Record<string, unknown>[] }>('/api/v1/alerts/list?limit=100'),
      api<{ data: Record<string, unknown>[] }>('/api/v1/alerts/rules'),
    ]);
    return el(
      'div',
      { id: 'alerts-page' },
      el('h2', { textContent: t.alerts }),
      table(
        t.alerts,
        [
          ['rule', (row) => row.rule_name],
          ['severity', (row) => row.severity],
          ['state', (row) => row.state],
          ['started_at', (row) => row.started_at],
        ],
        alerts.data,
      ),
      el('h2', { textContent: t.rules }),
      table(
        t.rules,
        [
          ['name', (row) => row.name],
          ['query', (row) => row.query],
          ['window', (row) => row.window],
          ['severity', (row) => row.severity],
          ['enabled', (row) => row.enabled],
        ],
        rules.data,
      ),
    );
  } catch (error) {
    return failed(error);
  }
}

export async function renderAudit(params: URLSearchParams, navigate: (params: URLSearchParams) => void): Promise<HTMLElement> {
  const t = words();
  const q = params.get('q') ?? '';
  const input = el('input', { id: 'audit-q', type: 'search', value: q });
  const form = el(
    'form',
    { role: 'search' },
    el('label', { htmlFor: 'audit-q', textContent: t.query }),
    input,
    el('button', { type: 'submit', textContent: t.search }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    navigate(new URLSearchParams(input.value ? { q: input.value } : {}));
  });
  const filter = new URLSearchParams(q ? { q } : {});
  const exportButton = (label: string, kind: 'csv' | 'excel', file: string) => {
    const button = el('button', { type: 'button', className: 'export', textContent: label, id: `export-${kind}` });
    button.addEventListener('click', () => void download(`/api/v1/log-audit/export/${kind}?${filter.toString()}`, file));
    return button;
  };
  try {
    const answer = await api<{ data: Record<string, unknown>[]; total: number }>(
      `/api/v1/log-audit/search?${new URLSearchParams({ ...Object.fromEntries(filter), limit: '100' }).toString()}`,
    );
    return el(
      'div',
      { id: 'audit-page' },
      el('h2', { textContent: t.audit }),
      form,
      el('p', { role: 'status', textContent: `${answer.total} ${t.total}` }),
      exportButton(t.exportCsv, 'csv', 'audit.csv'),
      exportButton(t.exportXlsx, 'excel', 'audit.xlsx'),
      table(
        t.audit,
        [
          ['at', (row) => row.at],
          ['actor', (row) => row.actor],
          ['action', (row) => row.action],
          ['outcome', (row) => row.outcome],
          ['target', (row) => [row.target_type, row.target_id].filter(Boolean).join(' ')],
          ['ip', (row) => row.ip],
        ],
        answer.data,
      ),
    );
  } catch (error) {
    return failed(error);
  }
}

export async function renderAdmin(permissions: ReadonlySet<string>): Promise<HTMLElement> {
  const t = words();
  const node = el('div', { id: 'admin-page' }, el('h2', { textContent: t.admin }));
  try {
    if (permissions.has('users:manage')) {
      const { users } = await api<{ users: Record<string, unknown>[] }>('/api/users');
      node.append(
        table(
          t.users,
          [
            ['username', (row) => row.username],
            ['email', (row) => row.email],
            ['roles', (row) => (row.roles as string[]).join(', ')],
          ],
          users,
        ),
      );
    }
    if (permissions.has('roles:manage')) {
      const { roles } = await api<{ roles: Record<string, unknown>[] }>('/api/roles');
      node.append(
        table(
          t.roles,
          [
            ['name', (row) => row.name],
            ['permissions', (row) => (row.permissions as string[]).join(', ')],
          ],
          roles,
        ),
      );
    }
    if (permissions.has('tenants:manage')) {
      const { tenants } = await api<{ tenants: Record<string, unknown>[] }>('/api/tenants');
      node.append(
        table(
          t.tenants,
          [
            ['id', (row) => row.id],
            ['name', (row) => row.name],
            ['retention_days', (row) => row.retention_days],
          ],
          tenants,
        ),
      );
    }
    return node;
  } catch (error) {
    node.append(failed(error));
    return node;
  }
}
