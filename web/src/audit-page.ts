import { api, download } from './api.js';
import type { AuditFilter, AuditRow, AuditSearchResponse } from './api-types.js';
import { button, el, table } from './dom.js';
import { into, problem } from './feedback.js';
import { count, time } from './format.js';
import { words } from './i18n.js';
import { changed, type PageContext, type View } from './page.js';
import { pager } from './pager.js';
import { inputTime, inputValue, zoneName } from './time-zone.js';

/**
 * The audit trail: search (text, actor, action, time range; in the URL), newest first page by page,
 * and the CSV and Excel exports of the same filter (audit:export), fetched with the session's token
 * and saved under the name the service gives.
 */

const FILTERS = ['q', 'actor', 'action', 'from', 'to'] as const satisfies readonly (keyof AuditFilter)[];

export function renderAudit(ctx: PageContext): View {
  const t = words();
  const { params } = ctx;
  const labels: Record<(typeof FILTERS)[number], string> = {
    q: t.query,
    actor: t.colActor,
    action: t.colAction,
    from: `${t.from} (${zoneName()})`,
    to: `${t.to} (${zoneName()})`,
  };
  const inputs = FILTERS.map((key) => {
    const input = el('input', {
      id: `audit-${key}`,
      name: key,
      type: key === 'from' || key === 'to' ? 'datetime-local' : key === 'q' ? 'search' : 'text',
      value: key === 'from' || key === 'to' ? (params.get(key) ? inputValue(Date.parse(params.get(key)!)) : '') : (params.get(key) ?? ''),
      autocomplete: 'off',
      step: 1,
    });
    return [key, input] as const;
  });
  const form = el(
    'form',
    { role: 'search', className: 'toolbar audit-search' },
    ...inputs.map(([key, input]) =>
      el('span', { className: 'control' }, el('label', { htmlFor: input.id, textContent: labels[key] }), input),
    ),
    el('button', { type: 'submit', id: 'audit-search', textContent: t.search }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const changes: Record<string, string | null> = { page: null };
    for (const [key, input] of inputs) changes[key] = key === 'from' || key === 'to' ? (inputTime(input.value) ?? '') : input.value;
    ctx.navigate(changed(params, changes));
  });

  const filter = new URLSearchParams();
  for (const key of FILTERS) if (params.get(key)) filter.set(key, params.get(key)!);
  const exportMessage = el('div', { id: 'export-message' });
  const exportButton = (label: string, kind: 'csv' | 'excel', fallback: string) =>
    button(
      label,
      () => {
        exportMessage.replaceChildren();
        download(`/api/v1/log-audit/export/${kind}?${filter.toString()}`, fallback).catch((error: unknown) =>
          exportMessage.replaceChildren(problem(error)),
        );
      },
      { className: 'export', id: `export-${kind}` },
    );
  const results = el('div', { id: 'audit-results' });
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  void into(results, async () => {
    const answer = await api<AuditSearchResponse>(
      `/api/v1/log-audit/search?${new URLSearchParams({ ...Object.fromEntries(filter), page: String(page), limit: '100' }).toString()}`,
    );
    return el(
      'div',
      {},
      el('p', { role: 'status', id: 'audit-total', textContent: `${count(answer.total)} ${t.total}` }),
      table(
        t.audit,
        [
          [t.colTime, (row: AuditRow) => time(row.at)],
          [t.colActor, (row) => row.actor],
          [t.colAction, (row) => row.action],
          [t.colOutcome, (row) => el('span', { className: `badge outcome-${row.outcome}`, textContent: row.outcome })],
          [t.colTarget, (row) => [row.target_type, row.target_id].filter(Boolean).join(' ')],
          [t.colAddress, (row) => row.ip],
          [
            t.colDetails,
            (row) => (row.details && Object.keys(row.details).length ? el('code', { textContent: JSON.stringify(row.details) }) : ''),
          ],
        ],
        answer.data,
        { id: 'audit-table' },
      ),
      pager(ctx, page, answer.pages),
    );
  });
  return {
    node: el(
      'div',
      { id: 'audit-page' },
      el('h2', { textContent: t.audit }),
      form,
      ctx.can('audit:export')
        ? el(
            'div',
            { className: 'toolbar' },
            exportButton(t.exportCsv, 'csv', 'audit.csv'),
            exportButton(t.exportXlsx, 'excel', 'audit.xlsx'),
            exportMessage,
          )
        : null,
      results,
    ),
  };
}
