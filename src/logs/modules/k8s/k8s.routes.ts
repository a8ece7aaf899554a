import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../../../shared/errors/app-error.js';
import type { K8sCluster } from './k8s.cluster.js';
import { ClusterHealthResponse, ErrorBody, NodesResponse, PodsQuery, PodsResponse } from './k8s.schemas.js';
import { clusterHealth, nodeView, podView } from './k8s.views.js';

export interface K8sRoutesDeps {
  /** undefined when Kubernetes is not configured -> every route answers 503 */
  cluster: K8sCluster | undefined;
  /** returns a Fastify preHandler that answers 401/403 unless the caller has the permission */
  requirePermission: (permission: string) => preHandlerAsyncHookHandler;
}

const tags = ['kubernetes'];
const security: Record<string, string[]>[] = [{ bearer: [] }, { apiKey: [] }];
const errors = { 401: ErrorBody, 403: ErrorBody, 502: ErrorBody, 503: ErrorBody };

/** Spec 4.5 Kubernetes views, registered under /api/v1/k8s; all need `dashboard:read`. Read-only. */
export function k8sRoutes({ cluster, requirePermission }: K8sRoutesDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const preHandler = requirePermission('dashboard:read');
    // Permission first, then configuration: an anonymous caller learns nothing about the cluster.
    const configured = (): K8sCluster => {
      if (!cluster) throw new AppError('LOGS_K8S_NOT_CONFIGURED');
      return cluster;
    };

    app.get(
      '/cluster/health',
      {
        schema: {
          tags,
          security,
          summary: 'Cluster health: API server version, node and pod counts, problems',
          response: { 200: ClusterHealthResponse, ...errors },
        },
        preHandler,
      },
      async () => {
        const k8s = configured();
        const [version, nodes, pods] = await Promise.all([k8s.serverVersion(), k8s.listNodes(), k8s.listAllPods()]);
        return clusterHealth(version, nodes, pods, k8s.now());
      },
    );

    app.get(
      '/nodes',
      {
        schema: {
          tags,
          security,
          summary: 'Nodes with conditions, capacity, and usage when metrics-server answers',
          response: { 200: NodesResponse, ...errors },
        },
        preHandler,
      },
      async () => {
        const k8s = configured();
        const [nodes, usage] = await Promise.all([k8s.listNodes(), k8s.nodeMetrics()]);
        const now = k8s.now();
        return {
          metricsAvailable: usage !== undefined,
          items: nodes.map((node) => nodeView(node, now, usage?.get(node.metadata?.name ?? ''))),
        };
      },
    );

    app.get(
      '/pods',
      {
        schema: {
          tags,
          security,
          summary: 'Pods with phase, readiness, restarts and container states; one namespace or all, paginated',
          querystring: PodsQuery,
          response: { 200: PodsResponse, 400: ErrorBody, 410: ErrorBody, ...errors },
        },
        preHandler,
      },
      async (request) => {
        const k8s = configured();
        const { namespace, labelSelector, limit } = request.query;
        const page = await k8s.listPods({ namespace, labelSelector, limit, continueToken: request.query.continue });
        const now = k8s.now();
        return { items: page.items.map((pod) => podView(pod, now)), continue: page.continueToken ?? null };
      },
    );
  };
}
