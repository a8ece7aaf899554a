import { Type } from 'typebox';
import { ALERT_STATES, CONDITIONS, SEVERITIES } from './alerts.states.js';

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });
const NullableString = Type.Union([Type.String(), Type.Null()]);
const Duration = (description: string) => Type.String({ pattern: '^\\d+(ms|s|m|h|d)$', description });
const Severity = Type.Union(
  SEVERITIES.map((s) => Type.Literal(s)),
  { description: 'critical, high, medium, low or info' },
);
const State = Type.Union(ALERT_STATES.map((s) => Type.Literal(s)));
const Filter = Type.Object({ field: Type.String({ minLength: 1, maxLength: 256 }), value: Type.String({ maxLength: 4096 }) });
const Labels = Type.Record(Type.String(), Type.String({ maxLength: 256 }), {
  description: 'Free labels copied onto each alert (at most 32; names letters, digits, _ . -)',
});

const Condition = Type.Object({
  type: Type.Union(
    CONDITIONS.map((c) => Type.Literal(c)),
    {
      description: 'above: count > threshold; below: count < threshold; absent: no matching log at all in the window',
    },
  ),
  threshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Required for above and below' })),
});

const WebhookInput = Type.Union([
  Type.Object({
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'http or https; host subject to LOGS_WEBHOOK_ALLOWED_HOSTS' }),
    secret: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'HMAC-SHA256 key for X-Gerbang-Signature; on update, omitted keeps the current one, "" removes it',
      }),
    ),
  }),
  Type.Null(),
]);

const ruleFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  query: Type.String({ maxLength: 4096, description: 'The search language (docs/log-search.md); empty = every log' }),
  filters: Type.Array(Filter, { maxItems: 50, description: 'Exact matches on fields, as in search' }),
  window: Duration('How far back each evaluation counts, e.g. 5m (10s to 7d)'),
  condition: Condition,
  interval: Duration('How often the rule is evaluated, e.g. 1m (5s to 1d; default 1m)'),
  severity: Severity,
  labels: Labels,
  enabled: Type.Boolean({ description: 'Default true' }),
  webhook: WebhookInput,
};

export const RuleCreateBody = Type.Object({
  name: ruleFields.name,
  query: Type.Optional(ruleFields.query),
  filters: Type.Optional(ruleFields.filters),
  window: ruleFields.window,
  condition: ruleFields.condition,
  interval: Type.Optional(ruleFields.interval),
  severity: ruleFields.severity,
  labels: Type.Optional(ruleFields.labels),
  enabled: Type.Optional(ruleFields.enabled),
  webhook: Type.Optional(ruleFields.webhook),
});

/** Every field optional: the given ones replace the rule's (webhook null removes it). */
export const RuleUpdateBody = Type.Object({
  name: Type.Optional(ruleFields.name),
  query: Type.Optional(ruleFields.query),
  filters: Type.Optional(ruleFields.filters),
  window: Type.Optional(ruleFields.window),
  condition: Type.Optional(ruleFields.condition),
  interval: Type.Optional(ruleFields.interval),
  severity: Type.Optional(ruleFields.severity),
  labels: Type.Optional(ruleFields.labels),
  enabled: Type.Optional(ruleFields.enabled),
  webhook: Type.Optional(ruleFields.webhook),
});

export const Rule = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  name: Type.String(),
  query: Type.String(),
  filters: Type.Array(Filter),
  window: Type.String(),
  window_ms: Type.Integer(),
  condition: Type.Object({ type: Type.String(), threshold: Type.Optional(Type.Integer()) }),
  interval: Type.String(),
  interval_ms: Type.Integer(),
  severity: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  enabled: Type.Boolean(),
  webhook: Type.Union([Type.Object({ url: Type.String(), has_secret: Type.Boolean() }), Type.Null()]),
  created_by: NullableString,
  created_at: Type.String(),
  updated_at: Type.String(),
  last_evaluated_at: NullableString,
  next_evaluation_at: NullableString,
  last_count: Type.Union([Type.Integer(), Type.Null()]),
  last_error: NullableString,
});

const HistoryEntry = Type.Object({
  at: Type.String(),
  actor: Type.String({ description: 'A username, or system' }),
  actor_id: NullableString,
  from: Type.Union([Type.String(), Type.Null()]),
  to: Type.String(),
  comment: Type.Optional(Type.String()),
  until: Type.Optional(Type.String()),
});

export const Alert = Type.Object({
  id: Type.String(),
  tenant_id: Type.String(),
  rule_id: Type.String(),
  rule_name: Type.String(),
  severity: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  state: Type.String(),
  started_at: Type.String(),
  updated_at: Type.String(),
  acknowledged_at: NullableString,
  acknowledged_by: NullableString,
  silenced_until: NullableString,
  resolved_at: NullableString,
  resolved_by: NullableString,
  last_count: Type.Integer({ description: 'Matching logs in the window at the last evaluation' }),
  history: Type.Array(HistoryEntry, { description: 'Every state change: who, what, when' }),
  webhook: Type.Union([
    Type.Object({
      event: NullableString,
      status: Type.String({ description: 'pending, retrying, delivered, failed or dropped' }),
      attempts: Type.Integer(),
      last_error: NullableString,
      last_at: NullableString,
    }),
    Type.Null(),
  ]),
});

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const StatusBody = Type.Object({
  status: Type.Union([Type.Literal('firing'), Type.Literal('acknowledged'), Type.Literal('silenced'), Type.Literal('resolved')]),
  comment: Type.Optional(Type.String({ maxLength: 1000 })),
  until: Type.Optional(
    Type.String({ format: 'date-time', description: 'Required for silenced: when the silence ends (at most 30 days ahead)' }),
  ),
});

export const ListQuery = Type.Object({
  state: Type.Optional(State),
  severity: Type.Optional(Severity),
  rule_id: Type.Optional(Type.String({ maxLength: 64 })),
  from: Type.Optional(Iso),
  to: Type.Optional(Iso),
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
});

export const ActiveQuery = Type.Object({
  include_silenced: Type.Boolean({
    default: false,
    description: "Also list silenced alerts (open, but quiet until their `until`), e.g. for the console's Active tab",
  }),
});

export const RulesResponse = Type.Object({ data: Type.Array(Rule) });
export const ActiveResponse = Type.Object({ data: Type.Array(Alert) });
export const ListResponse = Type.Object({
  data: Type.Array(Alert),
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  pages: Type.Integer(),
});
