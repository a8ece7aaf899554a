import { send } from '../api.js';
import type { Rule } from '../api-types.js';
import { apiForm, type FieldSpec, type FormValues } from '../forms.js';
import { alertWords } from './words.js';

/**
 * The alert rule editor (create and edit): the API validates, and its message shows at the field it
 * names ("window must be a duration…", "condition.threshold is required with above", "query: … at
 * position 3", "rule \"x\" already exists"). Labels and filters are kept as they are on edit (the
 * update replaces only the fields it is given).
 */

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];

/** A word of an API message -> the field it is about, when the message does not start with the field's name. */
const ALIASES: Record<string, string> = {
  threshold: 'condition.threshold',
  exists: 'name',
  webhook: 'webhook.url',
  window: 'window',
  interval: 'interval',
  severity: 'severity',
};

export interface RuleDraft {
  query?: string;
  window?: string;
}

/** The body the API takes, from what the form holds (`editing`: leave out what was not touched). */
export function ruleBody(values: FormValues, editing: Rule | null): Record<string, unknown> {
  const text = (name: string) => String(values[name] ?? '').trim();
  const type = text('condition.type');
  const threshold = text('condition.threshold');
  const body: Record<string, unknown> = {
    name: text('name'),
    query: text('query'),
    window: text('window'),
    interval: text('interval'),
    severity: text('severity'),
    // The API says when a threshold is missing or not wanted: send what was typed.
    condition: threshold === '' || type === 'absent' ? { type } : { type, threshold: Number(threshold) },
    enabled: (values.enabled ?? []).includes('yes'),
  };
  const url = text('webhook.url');
  const secret = String(values['webhook.secret'] ?? '');
  if (url) {
    if (!editing || url !== editing.webhook?.url || secret) body.webhook = secret ? { url, secret } : { url };
  } else if (!editing || editing.webhook) body.webhook = null;
  return body;
}

export function ruleForm(options: { editing: Rule | null; draft?: RuleDraft; onSaved: (rule: Rule) => void; onCancel: () => void }) {
  const w = alertWords();
  const { editing } = options;
  const fields: FieldSpec[] = [
    { name: 'name', label: w.ruleName, required: true },
    { name: 'query', label: w.ruleQuery, hint: w.ruleQueryHint },
    { name: 'window', label: w.ruleWindow, hint: w.ruleWindowHint, value: '5m', required: true },
    {
      name: 'condition.type',
      label: w.ruleCondition,
      type: 'select',
      options: [
        ['above', w.conditionAbove],
        ['below', w.conditionBelow],
        ['absent', w.conditionAbsent],
      ],
      value: 'above',
    },
    { name: 'condition.threshold', label: w.ruleThreshold, type: 'number', hint: w.ruleThresholdHint },
    { name: 'interval', label: w.ruleInterval, hint: w.ruleIntervalHint, value: '1m' },
    { name: 'severity', label: w.ruleSeverity, type: 'select', options: SEVERITIES.map((s) => [s, s]), value: 'high' },
    { name: 'enabled', label: w.ruleEnabled, type: 'checkboxes', options: [['yes', w.ruleEnabledYes]], value: ['yes'] },
    { name: 'webhook.url', label: w.ruleWebhook, hint: w.ruleWebhookHint, type: 'text' },
    { name: 'webhook.secret', label: w.ruleSecret, hint: w.ruleSecretHint, type: 'password', autocomplete: 'new-password' },
  ];
  const cancel = Object.assign(document.createElement('button'), { type: 'button', textContent: w.cancel, id: 'rule-form-cancel' });
  cancel.addEventListener('click', options.onCancel);
  const form = apiForm({
    id: 'rule-form',
    legend: editing ? `${w.editRule} "${editing.name}"` : w.newRule,
    fields,
    submit: editing ? w.saveRule : w.createRule,
    aliases: ALIASES,
    extra: [cancel],
    onSubmit: async (values) => {
      const body = ruleBody(values, editing);
      const saved = editing
        ? await send<Rule>('PUT', `/api/v1/alerts/rules/${encodeURIComponent(editing.id)}`, body)
        : await send<Rule>('POST', '/api/v1/alerts/rules', body);
      options.onSaved(saved);
    },
  });
  if (editing)
    form.fill({
      name: editing.name,
      query: editing.query,
      window: editing.window,
      'condition.type': editing.condition.type,
      'condition.threshold': editing.condition.threshold === undefined ? '' : String(editing.condition.threshold),
      interval: editing.interval,
      severity: editing.severity,
      enabled: editing.enabled ? ['yes'] : [],
      'webhook.url': editing.webhook?.url ?? '',
    });
  else if (options.draft)
    form.fill({
      ...(options.draft.query ? { query: options.draft.query } : {}),
      ...(options.draft.window ? { window: options.draft.window } : {}),
    });
  return form;
}
