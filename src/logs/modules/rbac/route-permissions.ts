import type { RouteOptions } from 'fastify';
import type { Permission } from './permissions.js';

/**
 * An `onRoute` hook (added before @fastify/swagger, which reads the schema after it): a route
 * guarded by one of the logs guards states in its OpenAPI operation what it needs, as the extension
 * `x-permissions` and a sentence of its description, so the document lists every route's permission.
 */
export function documentPermissions(route: RouteOptions): void {
  const hooks = [route.onRequest, route.preHandler].flat() as unknown[];
  const guard = hooks.find((hook): hook is { permissions: readonly Permission[] } =>
    Array.isArray((hook as { permissions?: unknown } | undefined)?.permissions),
  );
  if (!guard || !route.schema) return;
  const needs =
    guard.permissions.length === 0
      ? 'Needs: any signed-in user (bearer token or API key).'
      : `Needs: ${guard.permissions.map((permission) => `\`${permission}\``).join(' or ')}.`;
  const schema = route.schema as Record<string, unknown>;
  route.schema = {
    ...schema,
    'x-permissions': [...guard.permissions],
    description: typeof schema.description === 'string' ? `${schema.description}\n\n${needs}` : needs,
  } as RouteOptions['schema'];
}
