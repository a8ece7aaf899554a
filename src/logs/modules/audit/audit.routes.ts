import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import { auditCsv, auditXlsx } from './audit-export.js';
import { AuditExportQuery, AuditSearchQuery, AuditSearchResponse } from './audit.schemas.js';
import { auditActor, type AuditFilter, type LogsAuditRepository } from './audit.repository.js';

const SECURED = [{ bearer: [] }];
const tags = ['audit'];
const errors = errorResponses(400, 401, 403, 429);

function filterOf(
  tenantId: string,
  query: {
    q?: string | undefined;
    actor?: string | undefined;
    action?: string | undefined;
    from?: string | undefined;
    to?: string | undefined;
  },
): AuditFilter {
  // Stored times are ISO strings from toISOString(): normalise the bounds to the same form.
  const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());
  return { tenantId, q: query.q, actor: query.actor, action: query.action, from: iso(query.from), to: iso(query.to) };
}

function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, '-');
}

/** Spec 4.5 audit search (audit:read) and exports (audit:export), over the caller's tenant. */
export function auditRoutes({
  audit,
  guards,
  now,
}: {
  audit: LogsAuditRepository;
  guards: LogsGuards;
  now: () => number;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/search',
      {
        schema: {
          tags,
          summary: 'Search the audit trail, newest first',
          security: SECURED,
          querystring: AuditSearchQuery,
          response: { 200: AuditSearchResponse, ...errors },
        },
        preHandler: guards.requirePermission('audit:read'),
      },
      async (request) => {
        const { page, limit } = request.query;
        const { rows, total } = await audit.search(filterOf(request.tenantId, request.query), page, limit);
        return {
          data: rows.map((row) => ({ ...row, details: row.details ? (JSON.parse(row.details) as Record<string, unknown>) : null })),
          page,
          limit,
          total,
          pages: Math.ceil(total / limit),
        };
      },
    );

    /**
     * One export route: the filtered trail as a file, streamed. Exports are themselves audited (who
     * took a copy of the trail, with which filters), before the first byte is sent.
     */
    const exportRoute = (
      path: string,
      summary: string,
      file: { format: string; contentType: string; stream: (audit: LogsAuditRepository, filter: AuditFilter) => NodeJS.ReadableStream },
    ) =>
      app.get(
        path,
        {
          schema: { tags, summary, security: SECURED, querystring: AuditExportQuery, response: errors },
          preHandler: guards.requirePermission('audit:export'),
        },
        async (request, reply) => {
          const filter = filterOf(request.tenantId, request.query);
          const { q, actor, action, from, to } = filter;
          await audit.record({
            tenantId: request.tenantId,
            action: 'audit.export',
            outcome: 'success',
            ...auditActor(request.logsAuth!),
            ...clientOf(request),
            details: { format: file.format, q, actor, action, from, to },
          });
          reply.header('content-type', file.contentType);
          reply.header('content-disposition', `attachment; filename="audit-${stamp(now())}.${file.format}"`);
          return reply.send(file.stream(audit, filter) as never);
        },
      );

    exportRoute('/export/csv', 'The audit trail as CSV (streamed)', {
      format: 'csv',
      contentType: 'text/csv; charset=utf-8',
      stream: auditCsv,
    });
    exportRoute('/export/excel', 'The audit trail as an Excel workbook (XLSX, streamed)', {
      format: 'xlsx',
      contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      stream: auditXlsx,
    });
  };
}
