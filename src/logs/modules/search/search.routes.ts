import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../../shared/errors/app-error.js';
import { errorResponses, invalidBody } from '../../http/errors.js';
import type { LogsGuards } from '../auth/authenticate.js';
import { DEFAULT_TRACK_TOTAL, type LogStore, type StoredLogEntry } from '../store/log-store.js';
import { entryView } from './entry-view.js';
import { DEFAULT_EXPORT_COLUMNS, logsCsv, logsNdjson } from './log-export.js';
import { messagePatterns, patternQuery } from './patterns.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import { clientOf } from '../auth/authenticate.js';
import { searchCondition } from '../query/condition.js';
import {
  DistinctParams,
  DistinctQuery,
  DistinctResponse,
  PatternsBody,
  PatternsResponse,
  ContextBody,
  ContextResponse,
  ExportBody,
  FieldsResponse,
  DEFAULT_FIELD_STATS_SAMPLE,
  FieldStatsBody,
  FieldStatsResponse,
  HistogramBody,
  HistogramResponse,
  PageResponse,
  SearchBody,
} from './search.schemas.js';
import { intervalOf, rangeOf, storeRange } from '../query/time-range.js';

const SECURED = [{ bearer: [] }];
/** How far from the entry its surrounding entries are looked for, either side. */
const CONTEXT_WINDOW_MS = 86_400_000;
/** Slices of the range a patterns sample is spread over. */
const PATTERN_SLICES = 10;
const tags = ['logs'];
// 503: LOGS_QUERY_TIMEOUT, a read past LOGS_SEARCH_TIMEOUT (QueryTimeoutError is that AppError already).
const errors = errorResponses(400, 401, 403, 429, 503);

/** A read the store finds beyond its limits (RangeError: a histogram too fine, a bad search_after) is the client's: 400. */
async function withinLimits<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RangeError) throw invalidBody(error.message);
    throw error;
  }
}

/** Spec 4.5 log search (logs:read), over the caller's tenant. */
export function searchRoutes({
  store,
  guards,
  audit,
  now,
}: {
  store: LogStore;
  guards: LogsGuards;
  audit: LogsAuditRepository;
  now: () => number;
}): FastifyPluginAsyncTypebox {
  const preHandler = guards.requirePermission('logs:read');
  return async (app) => {
    app.post(
      '/list/paginate',
      {
        schema: {
          tags,
          summary: 'Search logs, one page at a time (spec 2.6)',
          security: SECURED,
          body: SearchBody,
          response: { 200: PageResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const body = request.body;
        const { from, to } = storeRange(rangeOf(body.timeRange, now()));
        const page = body.page ?? 1;
        const limit = body.limit ?? 50;
        const result = await withinLimits(() =>
          store.search({
            tenantId: request.tenantId,
            condition: searchCondition(body.query, body.filters),
            from,
            to,
            sort: body.sort ? { field: body.sort.field, order: body.sort.order ?? 'desc' } : undefined,
            page: body.searchAfter ? 1 : page,
            limit,
            after: body.searchAfter ? { timestamp: Date.parse(body.searchAfter['@timestamp']), id: body.searchAfter.id } : undefined,
            trackTotal: body.trackTotal === true ? undefined : (body.trackTotal ?? DEFAULT_TRACK_TOTAL),
          }),
        );
        return {
          data: result.entries.map(entryView),
          page,
          limit,
          total: result.total,
          totalRelation: result.totalRelation,
          pages: Math.ceil(result.total / limit),
        };
      },
    );

    app.post(
      '/export',
      {
        schema: {
          tags,
          summary: 'Every entry of a search as CSV or NDJSON, streamed (no result window)',
          security: SECURED,
          body: ExportBody,
          response: errors,
        },
        preHandler,
      },
      async (request, reply) => {
        const body = request.body;
        const range = rangeOf(body.timeRange, now());
        const { from, to } = storeRange(range);
        const search = {
          tenantId: request.tenantId,
          condition: searchCondition(body.query, body.filters),
          from,
          to,
          order: body.order ?? 'desc',
        };
        // Who took a copy of which entries (as the audit trail's own exports), before the first byte.
        await audit.record({
          tenantId: request.tenantId,
          action: 'logs.export',
          outcome: 'success',
          ...auditActor(request.logsAuth!),
          ...clientOf(request),
          details: {
            format: body.format,
            query: body.query ?? '',
            from: new Date(range.from).toISOString(),
            to: new Date(range.to).toISOString(),
            columns: body.columns ?? null,
          },
        });
        const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
        reply.header('content-disposition', `attachment; filename="logs-${stamp}.${body.format}"`);
        if (body.format === 'csv') {
          reply.header('content-type', 'text/csv; charset=utf-8');
          return reply.send(logsCsv(store, search, body.columns ?? DEFAULT_EXPORT_COLUMNS) as never);
        }
        reply.header('content-type', 'application/x-ndjson; charset=utf-8');
        return reply.send(logsNdjson(store, search, body.columns) as never);
      },
    );

    app.post(
      '/context',
      {
        schema: {
          tags,
          summary: 'Surrounding entries of one entry: the same host or service, N before and N after it',
          security: SECURED,
          body: ContextBody,
          response: { 200: ContextResponse, ...errors, ...errorResponses(404) },
        },
        preHandler,
      },
      async (request) => {
        const body = request.body;
        const at = Date.parse(body['@timestamp']);
        const tenantId = request.tenantId;
        // The entry itself: among those of its millisecond.
        const { entries: same } = await withinLimits(() =>
          store.search({ tenantId, from: at, to: at, page: 1, limit: 1000, trackTotal: 1, sort: { field: '@timestamp', order: 'asc' } }),
        );
        const entry = same.find((candidate) => candidate.id === body.id);
        if (!entry) throw new AppError('LOGS_NOT_FOUND');
        const by = body.by ?? 'host';
        const value = by === 'none' ? null : (entry[by] ?? null);
        const condition = value === null ? undefined : searchCondition(undefined, [{ field: by, value }]);
        const around = (order: 'asc' | 'desc', limit: number) =>
          limit === 0
            ? Promise.resolve([])
            : withinLimits(() =>
                store.search({
                  tenantId,
                  condition,
                  from: at - CONTEXT_WINDOW_MS,
                  to: at + CONTEXT_WINDOW_MS,
                  sort: { field: '@timestamp', order },
                  page: 1,
                  limit,
                  after: { timestamp: entry.timestamp, id: entry.id },
                  trackTotal: 1,
                }),
              ).then((result) => result.entries);
        const [before, after] = await Promise.all([around('desc', body.before ?? 10), around('asc', body.after ?? 10)]);
        return {
          entry: entryView(entry),
          by,
          value,
          before: before.reverse().map(entryView),
          after: after.map(entryView),
        };
      },
    );

    app.post(
      '/patterns',
      {
        schema: {
          tags,
          summary: 'The messages of a search grouped into patterns (Drain-style), over a sample spread across the range',
          security: SECURED,
          body: PatternsBody,
          response: { 200: PatternsResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const body = request.body;
        const { from, to } = storeRange(rangeOf(body.timeRange, now()));
        const condition = searchCondition(body.query, body.filters);
        const sample = body.sample ?? 10_000;
        const tenantId = request.tenantId;
        // Every match when they fit in the sample; else the newest of each of PATTERN_SLICES slices
        // of the range, so the sample spans it instead of being its last minutes.
        const counted = await withinLimits(() => store.search({ tenantId, condition, from, to, page: 1, limit: 0, trackTotal: sample }));
        let entries: StoredLogEntry[] = [];
        if (counted.totalRelation === 'eq' && counted.total <= sample)
          entries = (await withinLimits(() => store.search({ tenantId, condition, from, to, page: 1, limit: sample, trackTotal: 1 })))
            .entries;
        else {
          const width = (to - from + 1) / PATTERN_SLICES;
          const slices = await Promise.all(
            Array.from({ length: PATTERN_SLICES }, (_, i) =>
              withinLimits(() =>
                store.search({
                  tenantId,
                  condition,
                  from: Math.floor(from + i * width),
                  to: i === PATTERN_SLICES - 1 ? to : Math.floor(from + (i + 1) * width) - 1,
                  page: 1,
                  limit: Math.ceil(sample / PATTERN_SLICES),
                  trackTotal: 1,
                }),
              ),
            ),
          );
          entries = slices.flatMap((slice) => slice.entries);
        }
        const patterns = messagePatterns(entries.map((entry) => entry.message));
        return {
          matched: counted.total,
          matchedRelation: counted.totalRelation,
          sampled: entries.length,
          patterns: patterns.slice(0, body.limit ?? 50).map((pattern) => ({
            pattern: pattern.tokens.join(' '),
            count: pattern.count,
            share: entries.length === 0 ? 0 : pattern.count / entries.length,
            query: patternQuery(pattern.tokens),
            example: pattern.example,
          })),
        };
      },
    );

    app.post(
      '/histogram',
      {
        schema: {
          tags,
          summary: 'Counts over time, every bucket of the range included',
          security: SECURED,
          body: HistogramBody,
          response: { 200: HistogramResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const body = request.body;
        const range = rangeOf(body.timeRange, now());
        const interval = intervalOf(body.interval, range.from, range.to);
        const { from, to } = storeRange(range);
        const buckets = await withinLimits(() =>
          store.histogram({
            tenantId: request.tenantId,
            condition: searchCondition(body.query, body.filters),
            from,
            to,
            intervalMs: interval.ms,
            groupBy: body.groupBy,
          }),
        );
        return {
          interval: interval.label,
          interval_ms: interval.ms,
          buckets: buckets.map((bucket) => ({
            ts: new Date(bucket.ts).toISOString(),
            count: bucket.count,
            ...(bucket.groups ? { groups: bucket.groups } : {}),
          })),
        };
      },
    );

    app.get(
      '/fields',
      {
        schema: { tags, summary: "Fields present in the tenant's logs", security: SECURED, response: { 200: FieldsResponse, ...errors } },
        preHandler,
      },
      async (request) => ({ fields: await store.fields(request.tenantId) }),
    );

    app.post(
      '/fields/:field/stats',
      {
        schema: {
          tags,
          summary: 'A field over the matches of a query: type, coverage, distinct values, most frequent values with counts and share',
          security: SECURED,
          params: DistinctParams,
          body: FieldStatsBody,
          response: { 200: FieldStatsResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const body = request.body;
        const field = request.params.field;
        const { from, to } = storeRange(rangeOf(body.timeRange, now()));
        const [stats, fields] = await withinLimits(() =>
          Promise.all([
            store.fieldStats({
              tenantId: request.tenantId,
              condition: searchCondition(body.query, body.filters),
              from,
              to,
              field,
              limit: body.size ?? 10,
              sample: body.sample ?? DEFAULT_FIELD_STATS_SAMPLE,
            }),
            store.fields(request.tenantId),
          ]),
        );
        const share = (n: number) => (stats.counted === 0 ? 0 : n / stats.counted);
        return {
          field,
          type: fields.find((known) => known.name === field)?.type ?? null,
          matched: stats.matched,
          sampled: stats.counted,
          present: stats.present,
          coverage: share(stats.present),
          distinct: stats.distinct,
          values: stats.values.map(({ value, count }) => ({ value, count, share: share(count) })),
        };
      },
    );

    app.get(
      '/fields/:field/distinct',
      {
        schema: {
          tags,
          summary: 'Most frequent values of a field',
          security: SECURED,
          params: DistinctParams,
          querystring: DistinctQuery,
          response: { 200: DistinctResponse, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const { q, limit, from, to } = request.query;
        const range =
          from !== undefined || to !== undefined
            ? storeRange(rangeOf({ from: from ?? new Date(0).toISOString(), to: to ?? new Date(now()).toISOString() }, now()))
            : undefined;
        const values = await withinLimits(() =>
          store.distinct({ tenantId: request.tenantId, field: request.params.field, q, limit, from: range?.from, to: range?.to }),
        );
        return { field: request.params.field, values };
      },
    );
  };
}
