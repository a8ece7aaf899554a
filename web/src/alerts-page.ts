import { api, send } from './api.js';
import type { ActiveAlertsResponse, Alert, AlertsPage, AlertState, AlertStatusBody, Rule, RulesResponse } from './api-types.js';
import { ruleForm } from './alerts/rule-form.js';
import { alertWords } from './alerts/words.js';
import { button, confirmDialog, el, tabs, table, type Column } from './dom.js';
import { into, problem } from './feedback.js';
import { count, time } from './format.js';
import { words } from './i18n.js';
import { changed, type PageContext, type View } from './page.js';
import { pager } from './pager.js';

/**
 * Alerts: the active ones (firing, acknowledged, and silenced ones marked as such), all of them page
 * by page, and the rules. With alerts:write each alert offers the changes the state machine allows
 * from its state (docs/alerts.md); the API still decides, and a refused change (409, e.g. the
 * evaluator resolved the alert meanwhile) shows the API's message on the alert's row. Rules are
 * created, edited (`view=rules&edit=<id>`), enabled, disabled and deleted here; `view=rules&new=1`
 * opens the editor, prefilled from `query` and `window` (the Explore page's "Create an alert from
 * this search").
 */

type Target = AlertStatusBody['status'];

/** The changes a user may ask for from each state (docs/alerts.md, "States"; every state has an entry). */
export const TRANSITIONS: Record<string, Target[]> = {
  firing: ['acknowledged', 'silenced', 'resolved'],
  acknowledged: ['silenced', 'resolved'],
  silenced: ['firing', 'silenced', 'resolved'],
  resolved: [],
} satisfies Record<AlertState, Target[]>;

const SILENCE_FOR: [string, number][] = [
  ['1h', 3_600_000],
  ['4h', 14_400_000],
  ['24h', 86_400_000],
  ['7d', 604_800_000],
];

export function renderAlerts(ctx: PageContext): View {
  const t = words();
  const view = ctx.params.get('view') ?? 'active';
  const content = el('div', { id: 'alerts-content' });
  const node = el(
    'div',
    { id: 'alerts-page' },
    el('h2', { textContent: t.alerts }),
    tabs(
      t.alerts,
      'alerts',
      [
        ['active', t.activeAlerts],
        ['all', t.allAlerts],
        ['rules', t.rules],
      ],
      view,
    ),
    content,
  );
  const reload = () => void into(content, view === 'rules' ? () => rulesView(ctx, reload) : () => alertsView(ctx, view, reload));
  reload();
  return { node };
}

function actions(alert: Alert, message: HTMLElement, done: () => void): HTMLElement {
  const t = words();
  const labels: Record<Target, string> = {
    acknowledged: t.acknowledge,
    silenced: alert.state === 'silenced' ? t.silenceLonger : t.silence,
    firing: t.unsilence,
    resolved: t.resolve,
  };
  const change = (status: Target, until?: string) => {
    message.replaceChildren();
    const body: AlertStatusBody = until ? { status, until } : { status };
    send('POST', `/api/v1/alerts/${encodeURIComponent(alert.id)}/status`, body).then(done, (error: unknown) =>
      message.replaceChildren(problem(error)),
    );
  };
  const silenceFor = el(
    'select',
    { className: 'silence-for', ariaLabel: `${t.silenceFor} ${alert.rule_name}` },
    ...SILENCE_FOR.map(([label, ms]) => el('option', { value: String(ms), textContent: label })),
  );
  return el(
    'div',
    { className: 'alert-actions' },
    ...(TRANSITIONS[alert.state] ?? []).flatMap((status) =>
      status === 'silenced'
        ? [
            silenceFor,
            button(labels.silenced, () => change('silenced', new Date(Date.now() + Number(silenceFor.value)).toISOString()), {
              className: 'to-silenced',
            }),
          ]
        : [button(labels[status], () => change(status), { className: `to-${status}` })],
    ),
  );
}

async function alertsView(ctx: PageContext, view: string, reload: () => void): Promise<HTMLElement> {
  const t = words();
  const pageNumber = Math.max(1, Number(ctx.params.get('page') ?? '1') || 1);
  const state = ctx.params.get('state') ?? '';
  // The active list is not paged: its answer has no total, which counts as one page. A silenced
  // alert is still a problem: it stays on the Active tab, marked silenced, with un-silence and
  // resolve (`include_silenced`).
  const answer: ActiveAlertsResponse & Partial<AlertsPage> =
    view === 'active'
      ? await api<ActiveAlertsResponse>('/api/v1/alerts/active?include_silenced=true')
      : await api<AlertsPage>(
          `/api/v1/alerts/list?${new URLSearchParams({ page: String(pageNumber), limit: '50', ...(state ? { state } : {}) }).toString()}`,
        );
  const writable = ctx.can('alerts:write');
  const columns: Column<Alert>[] = [
    [t.colRule, (a) => a.rule_name],
    [t.colSeverity, (a) => el('span', { className: `badge sev-${a.severity}`, textContent: a.severity })],
    [
      t.colState,
      (a) => el('span', { className: `badge state-${a.state}`, textContent: t[`state_${a.state}` as keyof typeof t] ?? a.state }),
    ],
    [t.colStarted, (a) => time(a.started_at)],
    [t.colCount, (a) => count(a.last_count)],
    [
      t.colWho,
      (a) =>
        a.state === 'silenced'
          ? `${t.until} ${time(a.silenced_until)}`
          : a.state === 'resolved'
            ? `${a.resolved_by ?? ''} ${time(a.resolved_at)}`
            : (a.acknowledged_by ?? ''),
    ],
    [
      t.colHistory,
      (a) =>
        el(
          'details',
          {},
          el('summary', { textContent: `${a.history.length}` }),
          el(
            'ol',
            {},
            ...a.history.map((h) =>
              el('li', { textContent: `${time(h.at)} ${h.actor}: ${h.from ?? '–'} → ${h.to}${h.comment ? ` (${h.comment})` : ''}` }),
            ),
          ),
        ),
    ],
  ];
  if (writable)
    columns.push([
      t.colActions,
      (a) => {
        const message = el('div', { className: 'row-message' });
        return el('div', {}, actions(a, message, reload), message);
      },
    ]);
  const rows = table(view === 'active' ? t.activeAlerts : t.allAlerts, columns, answer.data, { id: 'alerts-table' });
  answer.data.forEach((alert, i) => rows.tBodies[0]!.rows[i]!.setAttribute('data-alert-id', alert.id));
  const refresh = button(t.refresh, reload, { id: 'alerts-refresh' });
  if (view === 'active') return el('div', {}, refresh, answer.data.length ? rows : el('p', { id: 'no-alerts', textContent: t.noAlerts }));

  const stateSelect = el(
    'select',
    { id: 'alert-state' },
    el('option', { value: '', textContent: t.anyState }),
    ...['firing', 'acknowledged', 'silenced', 'resolved'].map((s) =>
      el('option', { value: s, textContent: t[`state_${s}` as keyof typeof t] }),
    ),
  );
  stateSelect.value = state;
  stateSelect.addEventListener('change', () => ctx.navigate(changed(ctx.params, { state: stateSelect.value, page: null })));
  return el(
    'div',
    {},
    el('div', { className: 'toolbar' }, el('label', { htmlFor: 'alert-state', textContent: t.colState }), stateSelect, refresh),
    el('p', {
      role: 'status',
      textContent: `${count(answer.total ?? answer.data.length)} ${answer.total === 1 ? t.alertOne : t.alertsCount}`,
    }),
    rows,
    pager(ctx, pageNumber, answer.pages ?? 1),
  );
}

async function rulesView(ctx: PageContext, reload: () => void): Promise<HTMLElement> {
  const t = words();
  const w = alertWords();
  const { data } = await api<RulesResponse>('/api/v1/alerts/rules');
  const writable = ctx.can('alerts:write');
  const message = el('div', { className: 'row-message', id: 'rules-message' });
  const toRules = () => ctx.navigate(new URLSearchParams({ view: 'rules' }));
  const editId = ctx.params.get('edit');
  const editing = editId ? (data.find((rule) => rule.id === editId) ?? null) : null;
  let editor: HTMLElement | null = null;
  if (writable && (editing || ctx.params.get('new') === '1')) {
    const form = ruleForm({
      editing,
      draft: { query: ctx.params.get('query') ?? undefined, window: ctx.params.get('window') ?? undefined },
      onSaved: toRules,
      onCancel: toRules,
    });
    editor = form.node;
    queueMicrotask(() => form.node.querySelector<HTMLInputElement>('input')?.focus());
  }
  const columns: Column<Rule>[] = [
    [t.colName, (r) => r.name],
    [t.query, (r) => el('code', { textContent: r.query || '*' })],
    [t.colCondition, (r) => `${r.condition.type}${r.condition.threshold === undefined ? '' : ` ${r.condition.threshold}`} / ${r.window}`],
    [t.colInterval, (r) => r.interval],
    [t.colSeverity, (r) => el('span', { className: `badge sev-${r.severity}`, textContent: r.severity })],
    [t.colEnabled, (r) => (r.enabled ? t.yes : t.no)],
    [t.colLastEvaluated, (r) => `${time(r.last_evaluated_at)}${r.last_count === null ? '' : ` (${count(r.last_count)})`}`],
    [t.colLastError, (r) => r.last_error ?? ''],
  ];
  const failed = (error: unknown) => message.replaceChildren(problem(error));
  if (writable)
    columns.push([
      t.colActions,
      (r) =>
        el(
          'div',
          { className: 'rule-actions' },
          el('a', {
            href: `#/alerts?${new URLSearchParams({ view: 'rules', edit: r.id }).toString()}`,
            className: 'edit-rule',
            textContent: w.edit,
            ariaLabel: `${w.edit} ${r.name}`,
          }),
          button(
            r.enabled ? t.disable : t.enable,
            () =>
              void send('POST', `/api/v1/alerts/rules/${encodeURIComponent(r.id)}/${r.enabled ? 'disable' : 'enable'}`).then(
                reload,
                failed,
              ),
            { className: 'toggle-rule' },
          ),
          button(
            w.delete,
            () =>
              void confirmDialog(`${w.deleteQuestion} (${r.name})`, w.deleteRule, w.cancel).then((yes) => {
                if (yes) send('DELETE', `/api/v1/alerts/rules/${encodeURIComponent(r.id)}`).then(reload, failed);
              }),
            { className: 'delete-rule', ariaLabel: `${w.delete} ${r.name}` },
          ),
        ),
    ]);
  const create =
    writable && !editor
      ? el('a', { href: '#/alerts?view=rules&new=1', id: 'new-rule', className: 'button', textContent: w.newRule })
      : null;
  if (!data.length) return el('div', {}, create, editor, message, el('p', { textContent: t.noRules }));
  const rows = table(t.rules, columns, data, { id: 'rules-table' });
  data.forEach((rule, i) => rows.tBodies[0]!.rows[i]!.setAttribute('data-rule-id', rule.id));
  return el('div', {}, create, editor, message, rows);
}
