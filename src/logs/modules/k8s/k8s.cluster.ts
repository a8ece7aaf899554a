import { existsSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import {
  ApiException,
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  KubeConfig,
  ServerConfiguration,
  VersionApi,
  type Middleware,
  type V1Node,
  type V1Pod,
  type VersionInfo,
} from '@kubernetes/client-node';
import { ConfigError, envReader, type Env } from '../../../shared/config/env.js';
import { AppError } from '../../../shared/errors/app-error.js';

/** Where Kubernetes mounts a pod's service account (in-cluster configuration). */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface K8sClusterOptions {
  /** Each call to the API server is aborted after this many milliseconds (answered 502). */
  timeoutMs: number;
  /** Injected clock (epoch ms), for ages. */
  now?: () => number;
  /** How the configuration was found, for the start-up log line (never the server address or a credential). */
  source?: 'kubeconfig' | 'in-cluster';
  /** Page size when a view needs every node or pod (default 500, as kubectl's chunking). */
  pageSize?: number | undefined;
}

/** Node usage as metrics-server reports it. */
export interface NodeUsage {
  cpu: string;
  memory: string;
  timestamp?: string | undefined;
  window?: string | undefined;
}

export interface PodListRequest {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  limit: number;
  continueToken?: string | undefined;
}

/**
 * The Kubernetes API as the console needs it: read-only lists of nodes and pods, the server version
 * and node metrics. Every failure becomes a catalogue error (502; 400 for a refused label selector, 410
 * for an expired continue token) whose message names no address and no credential; the cause is only logged.
 */
export class K8sCluster {
  readonly now: () => number;
  readonly source: 'kubeconfig' | 'in-cluster';
  private readonly pageSize: number;
  private readonly core: CoreV1Api;
  private readonly version: VersionApi;
  private readonly custom: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig, options: K8sClusterOptions) {
    this.now = options.now ?? Date.now;
    this.source = options.source ?? 'kubeconfig';
    this.pageSize = options.pageSize ?? 500;
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    // Built like KubeConfig.makeApiClient, plus a middleware that gives every request its own deadline:
    // the generated client has no timeout of its own, and a silent API server must not hold a console request.
    const timeout: Middleware = {
      pre: async (context) => {
        context.setSignal(AbortSignal.timeout(options.timeoutMs));
        context.setHeaderParam('User-Agent', 'gerbang-logs');
        return context;
      },
      post: async (response) => response,
    };
    const configuration = createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kubeConfig },
      promiseMiddleware: [timeout],
    });
    this.core = new CoreV1Api(configuration);
    this.version = new VersionApi(configuration);
    this.custom = new CustomObjectsApi(configuration);
  }

  async serverVersion(): Promise<VersionInfo> {
    return call(() => this.version.getCode());
  }

  async listNodes(): Promise<V1Node[]> {
    const nodes: V1Node[] = [];
    let continueToken: string | undefined;
    do {
      const page = await call(() => this.core.listNode({ limit: this.pageSize, _continue: continueToken }));
      nodes.push(...page.items);
      continueToken = page.metadata?._continue || undefined;
    } while (continueToken);
    return nodes;
  }

  /** One page of pods; `continueToken` of the result fetches the next. */
  async listPods(request: PodListRequest): Promise<{ items: V1Pod[]; continueToken: string | undefined }> {
    const params = { labelSelector: request.labelSelector, limit: request.limit, _continue: request.continueToken };
    const page = await call(
      () =>
        request.namespace
          ? this.core.listNamespacedPod({ namespace: request.namespace, ...params })
          : this.core.listPodForAllNamespaces(params),
      (status) => {
        // The API server validates selectors and continue tokens; these statuses are the caller's mistake.
        if (status === 400 && request.labelSelector !== undefined) return 'LOGS_K8S_INVALID_SELECTOR';
        if (status === 410 && request.continueToken !== undefined) return 'LOGS_K8S_CONTINUE_EXPIRED';
        return undefined;
      },
    );
    return { items: page.items, continueToken: page.metadata?._continue || undefined };
  }

  async listAllPods(): Promise<V1Pod[]> {
    const pods: V1Pod[] = [];
    let continueToken: string | undefined;
    do {
      const page = await this.listPods({ limit: this.pageSize, continueToken });
      pods.push(...page.items);
      continueToken = page.continueToken;
    } while (continueToken);
    return pods;
  }

  /**
   * Node usage by node name from metrics.k8s.io, or undefined when metrics-server does not answer
   * (not installed: 404; APIService unavailable: 503; or any failure): usage is optional in every view.
   */
  async nodeMetrics(): Promise<Map<string, NodeUsage> | undefined> {
    try {
      const list = (await this.custom.listClusterCustomObject({ group: 'metrics.k8s.io', version: 'v1beta1', plural: 'nodes' })) as {
        items?: { metadata?: { name?: string }; usage?: { cpu?: string; memory?: string }; timestamp?: string; window?: string }[];
      };
      const usage = new Map<string, NodeUsage>();
      for (const item of list.items ?? []) {
        const name = item.metadata?.name;
        if (name && item.usage?.cpu && item.usage.memory) {
          usage.set(name, { cpu: item.usage.cpu, memory: item.usage.memory, timestamp: item.timestamp, window: item.window });
        }
      }
      return usage;
    } catch {
      return undefined;
    }
  }
}

type StatusMapper = (status: number) => 'LOGS_K8S_INVALID_SELECTOR' | 'LOGS_K8S_CONTINUE_EXPIRED' | undefined;

/** Runs one API call and turns its failure into a catalogue error. */
async function call<T>(request: () => Promise<T>, callerMistake?: StatusMapper): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof ApiException) {
      // The API server answered with an error status (RBAC refusal, server error...): 502, cause logged.
      const code = callerMistake?.(error.code);
      if (code) throw new AppError(code, { cause: error });
      const detail = typeof error.body === 'string' ? `: ${error.body.slice(0, 500)}` : '';
      throw new AppError('LOGS_K8S_API_ERROR', { cause: new Error(`kubernetes api answered ${error.code}${detail}`) });
    }
    // Connection refused, DNS, TLS, timeout (AbortSignal), unreadable body.
    throw new AppError('LOGS_K8S_UNREACHABLE', { cause: error });
  }
}

/**
 * The cluster from the environment, or undefined when Kubernetes is not configured:
 * `K8S_ENABLED=false` disables; else `KUBECONFIG` (a file) wins; else in-cluster when
 * `KUBERNETES_SERVICE_HOST` is set and a service account token is mounted. With `K8S_ENABLED=true`,
 * finding no configuration is a configuration error rather than a silent 503.
 */
export interface LoadK8sOptions {
  now?: () => number;
  pageSize?: number;
  /** The pod's service account directory (token, ca.crt); tests point it elsewhere. */
  serviceAccountDir?: string;
}

export function loadK8sCluster(
  env: Env,
  { serviceAccountDir = SERVICE_ACCOUNT_DIR, ...options }: LoadK8sOptions = {},
): K8sCluster | undefined {
  const read = envReader(env);
  const enabled = read.raw('K8S_ENABLED') === undefined ? undefined : read.bool('K8S_ENABLED', true);
  if (enabled === false) return undefined;
  const timeoutMs = read.duration('K8S_TIMEOUT', '5s');
  if (timeoutMs <= 0) throw new ConfigError('K8S_TIMEOUT', 'must be greater than 0');
  const context = read.optionalString('K8S_CONTEXT');

  const kubeconfigPath = read.optionalString('KUBECONFIG');
  if (kubeconfigPath !== undefined) {
    const kubeConfig = new KubeConfig();
    try {
      kubeConfig.loadFromFile(kubeconfigPath);
    } catch {
      // The library's message may quote the file's content; name the variable only.
      throw new ConfigError('KUBECONFIG', 'must name a readable kubeconfig file');
    }
    if (context !== undefined) {
      if (!kubeConfig.getContextObject(context))
        throw new ConfigError('K8S_CONTEXT', `names no context of the kubeconfig file, got "${context}"`);
      kubeConfig.setCurrentContext(context);
    }
    if (!kubeConfig.getCurrentCluster())
      throw new ConfigError('KUBECONFIG', 'has no current context with a cluster (set current-context or K8S_CONTEXT)');
    return new K8sCluster(kubeConfig, { ...options, timeoutMs, source: 'kubeconfig' });
  }

  const host = read.raw('KUBERNETES_SERVICE_HOST');
  const tokenFile = join(serviceAccountDir, 'token');
  if (host !== undefined && existsSync(tokenFile)) {
    // What KubeConfig.loadFromCluster() builds, but from `env` rather than process.env. The token file
    // is re-read every minute by the client (bound service account tokens rotate); the CA is the cluster's.
    const port = read.port('KUBERNETES_SERVICE_PORT', 443);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromClusterAndUser(
      {
        name: 'in-cluster',
        server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
        caFile: join(serviceAccountDir, 'ca.crt'),
        skipTLSVerify: false,
      },
      { name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile } } },
    );
    return new K8sCluster(kubeConfig, { ...options, timeoutMs, source: 'in-cluster' });
  }

  if (enabled === true) {
    throw new ConfigError('K8S_ENABLED', 'is true but neither KUBECONFIG nor an in-cluster service account is available');
  }
  return undefined;
}
