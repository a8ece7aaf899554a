/**
 * What the API answers, as the console reads it: the server's own request and response schemas
 * (src/logs/modules/<module>/<module>.schemas.ts), imported as types only. A change to a route's
 * answer fails `npm run typecheck` here instead of drifting; the imports are erased from the bundle,
 * so no server code reaches the browser. A schema file the console reads imports only `typebox`
 * and modules without imports (web/tsconfig.json checks it with the DOM's types, not Node's).
 */
import type { Static } from 'typebox';
import type * as alerts from '../../src/logs/modules/alerts/alerts.schemas.js';
import type { AlertState } from '../../src/logs/modules/alerts/alerts.states.js';
import type * as apiKeys from '../../src/logs/modules/api-keys/api-keys.schemas.js';
import type * as apm from '../../src/logs/modules/apm/apm.schemas.js';
import type * as audit from '../../src/logs/modules/audit/audit.schemas.js';
import type * as auth from '../../src/logs/modules/auth/auth.schemas.js';
import type * as dashboards from '../../src/logs/modules/dashboards/dashboards.schemas.js';
import type * as infra from '../../src/logs/modules/infra/infra.schemas.js';
import type * as k8s from '../../src/logs/modules/k8s/k8s.schemas.js';
import type * as roles from '../../src/logs/modules/roles/roles.schemas.js';
import type * as savedSearches from '../../src/logs/modules/saved-searches/saved-searches.schemas.js';
import type * as search from '../../src/logs/modules/search/search.schemas.js';
import type * as tenants from '../../src/logs/modules/tenants/tenants.schemas.js';
import type * as users from '../../src/logs/modules/users/users.schemas.js';

export type { AlertState };

// Sign-in and the signed-in user (/api/login, /api/refresh, /api/me).
export type LoginBody = Static<typeof auth.LoginBody>;
export type LoginResponse = Static<typeof auth.LoginResponse>;
export type RefreshBody = Static<typeof auth.RefreshBody>;
export type RefreshResponse = Static<typeof auth.RefreshResponse>;
export type Me = Static<typeof auth.Me>;

// Administration (/api/tenants, /api/users, /api/roles, /api/v1/api-keys).
export type Tenant = Static<typeof tenants.Tenant>;
export type TenantsResponse = Static<typeof tenants.TenantsResponse>;
export type User = Static<typeof users.User>;
export type UsersResponse = Static<typeof users.UsersResponse>;
export type Role = Static<typeof roles.Role>;
export type RolesResponse = Static<typeof roles.RolesResponse>;
export type ApiKey = Static<typeof apiKeys.ApiKey>;
export type ApiKeyCreated = Static<typeof apiKeys.ApiKeyCreated>;
export type ApiKeysResponse = Static<typeof apiKeys.ApiKeysResponse>;

// Explore (/api/v1/logs).
export type LogEntry = Static<typeof search.LogEntryView>;
export type SearchBody = Static<typeof search.SearchBody>;
export type HistogramBody = Static<typeof search.HistogramBody>;
export type PageResponse = Static<typeof search.PageResponse>;
export type HistogramResponse = Static<typeof search.HistogramResponse>;
export type HistogramBucket = HistogramResponse['buckets'][number];
export type FieldsResponse = Static<typeof search.FieldsResponse>;
export type DistinctResponse = Static<typeof search.DistinctResponse>;
export type FieldStatsBody = Static<typeof search.FieldStatsBody>;
export type FieldStatsResponse = Static<typeof search.FieldStatsResponse>;
export type ContextBody = Static<typeof search.ContextBody>;
export type ContextResponse = Static<typeof search.ContextResponse>;
export type ExportBody = Static<typeof search.ExportBody>;
export type PatternsBody = Static<typeof search.PatternsBody>;
export type PatternsResponse = Static<typeof search.PatternsResponse>;
export type SavedSearch = Static<typeof savedSearches.SavedSearch>;
export type SavedSearchCreateBody = Static<typeof savedSearches.SavedSearchCreateBody>;
export type SavedSearchUpdateBody = Static<typeof savedSearches.SavedSearchUpdateBody>;
export type SavedSearchesResponse = Static<typeof savedSearches.SavedSearchesResponse>;

// Dashboards (/api/v1/dashboard).
export type OverviewResponse = Static<typeof dashboards.OverviewResponse>;
export type PipelineResponse = Static<typeof dashboards.PipelineResponse>;
export type DcResponse = Static<typeof dashboards.DcResponse>;
export type ThroughputResponse = Static<typeof dashboards.ThroughputResponse>;

// Alerts (/api/v1/alerts).
export type Alert = Static<typeof alerts.Alert>;
export type Rule = Static<typeof alerts.Rule>;
export type RulesResponse = Static<typeof alerts.RulesResponse>;
export type ActiveAlertsResponse = Static<typeof alerts.ActiveResponse>;
export type AlertsPage = Static<typeof alerts.ListResponse>;
export type AlertStatusBody = Static<typeof alerts.StatusBody>;

// APM (/api/v1/apm).
export type TracesResponse = Static<typeof apm.TracesResponse>;
export type TraceResponse = Static<typeof apm.TraceResponse>;
export type Span = Static<typeof apm.SpanBody>;
export type ServiceMapResponse = Static<typeof apm.ServiceMapResponse>;
export type MapNode = Static<typeof apm.MapNode>;
export type MapEdge = Static<typeof apm.MapEdge>;

// Infrastructure and Kubernetes (/api/v1/infra, /api/v1/k8s).
export type HostsResponse = Static<typeof infra.HostsResponse>;
export type ContainersResponse = Static<typeof infra.ContainersResponse>;
export type ClusterHealthResponse = Static<typeof k8s.ClusterHealthResponse>;
export type ClusterProblem = ClusterHealthResponse['problems'][number];
export type NodesResponse = Static<typeof k8s.NodesResponse>;
export type PodsResponse = Static<typeof k8s.PodsResponse>;

// The audit trail (/api/v1/log-audit).
export type AuditFilter = Static<typeof audit.AuditExportQuery>;
export type AuditSearchResponse = Static<typeof audit.AuditSearchResponse>;
export type AuditRow = Static<typeof audit.AuditRow>;
