import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/errors.js';
import { clientOf, type LogsGuards } from '../auth/authenticate.js';
import {
  ActiveQuery,
  ActiveResponse,
  Alert,
  IdParams,
  ListQuery,
  ListResponse,
  Rule,
  RuleCreateBody,
  RuleUpdateBody,
  RulesResponse,
  StatusBody,
} from './alerts.schemas.js';
import type { AlertsService } from './alerts.service.js';

const SECURED = [{ bearer: [] }];
const tags = ['alerts'];
const readErrors = errorResponses(400, 401, 403, 404, 429);
const writeErrors = errorResponses(400, 401, 403, 404, 409, 429);

/** Alerts (docs/alerts.md), over the caller's tenant: reading needs alerts:read, every change alerts:write. */
export function alertsRoutes({ alerts, guards }: { alerts: AlertsService; guards: LogsGuards }): FastifyPluginAsyncTypebox {
  const read = guards.requirePermission('alerts:read');
  const write = guards.requirePermission('alerts:write');
  return async (app) => {
    app.get(
      '/rules',
      {
        schema: { tags, summary: "The tenant's alert rules", security: SECURED, response: { 200: RulesResponse, ...readErrors } },
        preHandler: read,
      },
      async (request) => ({ data: await alerts.listRules(request.tenantId) }),
    );

    app.post(
      '/rules',
      {
        schema: {
          tags,
          summary: 'Create an alert rule (evaluated on its next tick)',
          security: SECURED,
          body: RuleCreateBody,
          response: { 201: Rule, ...writeErrors },
        },
        preHandler: write,
      },
      async (request, reply) => {
        reply.status(201);
        return alerts.createRule(request.tenantId, request.body, request.logsAuth!, clientOf(request));
      },
    );

    app.get(
      '/rules/:id',
      {
        schema: { tags, summary: 'One alert rule', security: SECURED, params: IdParams, response: { 200: Rule, ...readErrors } },
        preHandler: read,
      },
      async (request) => alerts.getRule(request.tenantId, request.params.id),
    );

    app.put(
      '/rules/:id',
      {
        schema: {
          tags,
          summary: 'Change an alert rule (given fields replace the current ones)',
          security: SECURED,
          params: IdParams,
          body: RuleUpdateBody,
          response: { 200: Rule, ...writeErrors },
        },
        preHandler: write,
      },
      async (request) => alerts.updateRule(request.tenantId, request.params.id, request.body, request.logsAuth!, clientOf(request)),
    );

    app.delete(
      '/rules/:id',
      {
        schema: {
          tags,
          summary: 'Delete an alert rule (its open alert resolves)',
          security: SECURED,
          params: IdParams,
          response: { 204: Type.Null(), ...writeErrors },
        },
        preHandler: write,
      },
      async (request, reply) => {
        await alerts.deleteRule(request.tenantId, request.params.id, request.logsAuth!, clientOf(request));
        return reply.status(204).send(null);
      },
    );

    for (const [action, enabled] of [
      ['enable', true],
      ['disable', false],
    ] as const) {
      app.post(
        `/rules/:id/${action}`,
        {
          schema: {
            tags,
            summary: enabled ? 'Enable an alert rule' : 'Disable an alert rule (its open alert resolves)',
            security: SECURED,
            params: IdParams,
            response: { 200: Rule, ...writeErrors },
          },
          preHandler: write,
        },
        async (request) => alerts.setEnabled(request.tenantId, request.params.id, enabled, request.logsAuth!, clientOf(request)),
      );
    }

    app.get(
      '/active',
      {
        schema: {
          tags,
          summary: 'Firing and acknowledged alerts (and silenced ones with include_silenced=true), newest first',
          security: SECURED,
          querystring: ActiveQuery,
          response: { 200: ActiveResponse, ...readErrors },
        },
        preHandler: read,
      },
      async (request) => ({ data: await alerts.active(request.tenantId, request.query.include_silenced) }),
    );

    app.get(
      '/list',
      {
        schema: {
          tags,
          summary: 'Every alert, newest first; filters on state, severity, rule and start time (from inclusive, to exclusive)',
          security: SECURED,
          querystring: ListQuery,
          response: { 200: ListResponse, ...readErrors },
        },
        preHandler: read,
      },
      async (request) => {
        const { page, limit, ...filter } = request.query;
        const { data, total } = await alerts.list(request.tenantId, filter, page, limit);
        return { data, page, limit, total, pages: Math.ceil(total / limit) };
      },
    );

    app.get(
      '/:id',
      {
        schema: {
          tags,
          summary: 'One alert with its history',
          security: SECURED,
          params: IdParams,
          response: { 200: Alert, ...readErrors },
        },
        preHandler: read,
      },
      async (request) => alerts.getAlert(request.tenantId, request.params.id),
    );

    app.post(
      '/:id/status',
      {
        schema: {
          tags,
          summary: 'Acknowledge, silence (until a time), un-silence or resolve an alert (docs/alerts.md has the transition table)',
          security: SECURED,
          params: IdParams,
          body: StatusBody,
          response: { 200: Alert, ...writeErrors },
        },
        preHandler: write,
      },
      async (request) => alerts.changeStatus(request.tenantId, request.params.id, request.body, request.logsAuth!, clientOf(request)),
    );
  };
}
