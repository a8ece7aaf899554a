// The console's only way to the service: its public HTTP API, with the same tokens as curl.
// The access token lives in memory; the refresh token in sessionStorage, rotated on every refresh
// (the API retires the old one; presenting it twice revokes the session, so a refresh is never
// run twice at once). A tenants:manage holder's chosen tenant goes out as X-Tenant-Id.
import type { LoginBody, LoginResponse, RefreshBody, RefreshResponse } from './api-types.js';

const REFRESH_KEY = 'gerbang.refresh';
const TENANT_KEY = 'gerbang.tenant';

type TokenPair = RefreshResponse['token'];

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(text(body.detail) ?? text(body.message) ?? text(body.error) ?? `HTTP ${status}`);
  }

  /** The API's own words: `error` and, when it says more, `detail` (e.g. "invalid status transition: …"). */
  get full(): string {
    const error = text(this.body.error);
    const detail = text(this.body.detail);
    return error && detail ? `${error}: ${detail}` : (error ?? detail ?? this.message);
  }
}

/** The service did not answer at all (down, restarting, network gone): fetch itself failed. */
export class UnreachableError extends Error {
  constructor() {
    super('The logs service is not reachable');
  }
}

let access: { token: string; refreshAt: number } | undefined;
let refreshing: Promise<boolean> | undefined;

function keep(pair: TokenPair): void {
  // Refresh once 80% of the lifetime has passed (at most 30 s early): a 300 s token lives 270 s
  // here, a 2 s one (tests) 1.6 s, so a short lifetime never makes every call refresh.
  const lifetime = pair.expires_in * 1000;
  access = { token: pair.access_token, refreshAt: Date.now() + Math.max(lifetime * 0.8, lifetime - 30_000) };
  sessionStorage.setItem(REFRESH_KEY, pair.refresh_token);
}

export function hasSession(): boolean {
  return access !== undefined || sessionStorage.getItem(REFRESH_KEY) !== null;
}

export function tenant(): string | null {
  return sessionStorage.getItem(TENANT_KEY);
}

/** The tenant every later call acts in (X-Tenant-Id); null: the user's own. */
export function chooseTenant(id: string | null): void {
  if (id) sessionStorage.setItem(TENANT_KEY, id);
  else sessionStorage.removeItem(TENANT_KEY);
}

async function raw(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  headers.set('accept-language', localStorage.getItem('gerbang.lang') ?? navigator.language);
  try {
    return await fetch(path, { ...init, headers, credentials: 'omit' });
  } catch (error) {
    // An aborted call is the caller's doing; anything else means no answer came.
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new UnreachableError();
  }
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const body = await response.text();
  try {
    return body ? (JSON.parse(body) as Record<string, unknown>) : {};
  } catch {
    return { detail: body };
  }
}

/** A right password without a second factor begins the session; otherwise the 401 says what next (`body.mfa`). */
export async function login(username: string, password: string): Promise<void> {
  signedIn(await post<LoginResponse>('/api/login', { username, password } satisfies LoginBody));
}

/** A login answer (from the password, the code step, an enrolment or a passkey) begins the session. */
export function signedIn(answer: LoginResponse): void {
  chooseTenant(null);
  keep(answer.token);
}

/** A POST outside the session (sign-in's steps), with a one-purpose bearer credential when given. */
export async function post<T>(path: string, body?: unknown, bearer?: string): Promise<T> {
  const response = await raw(path, {
    method: 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {}),
  });
  const answer = await json(response);
  if (!response.ok) throw new ApiError(response.status, answer);
  return answer as T;
}

function forget(): void {
  access = undefined;
  sessionStorage.removeItem(REFRESH_KEY);
  sessionStorage.removeItem(TENANT_KEY);
}

/** Tells the shell the session is over (expired, revoked, or its refresh token was reused). */
function signedOut(): void {
  forget();
  window.dispatchEvent(new Event('gerbang:signed-out'));
}

function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const token = sessionStorage.getItem(REFRESH_KEY);
    if (!token) return false;
    const response = await raw('/api/refresh', { method: 'POST', body: JSON.stringify({ refresh_token: token } satisfies RefreshBody) });
    // The service down or restarting is not the end of the session: the call fails, the session stays.
    if (response.status >= 500) throw new ApiError(response.status, await json(response));
    if (!response.ok) return false;
    keep(((await json(response)) as RefreshResponse).token);
    return true;
  })()
    .catch((error: unknown) => {
      if (error instanceof UnreachableError || error instanceof ApiError) throw error;
      return false;
    })
    .finally(() => (refreshing = undefined));
  return refreshing;
}

const SIGNED_OUT = () => new ApiError(401, { error: 'invalid token', detail: 'signed out' });

async function authorized(path: string, init: RequestInit): Promise<Response> {
  if (!access || access.refreshAt < Date.now()) {
    if (!(await refresh())) {
      signedOut();
      throw SIGNED_OUT();
    }
  }
  const send = () => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${access!.token}`);
    const chosen = tenant();
    if (chosen) headers.set('x-tenant-id', chosen);
    return raw(path, { ...init, headers });
  };
  let response = await send();
  // The token expired in flight or the clock is off: one refresh, one retry; then the session is over.
  if (response.status === 401) {
    if (!(await refresh())) {
      signedOut();
      throw SIGNED_OUT();
    }
    response = await send();
  }
  return response;
}

/** A call with the session's access token (refreshed first when it is due). */
export async function api<T = Record<string, unknown>>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await authorized(path, init);
  const body = await json(response);
  if (!response.ok) throw new ApiError(response.status, body);
  return body as T;
}

/** POST/PUT/DELETE with a JSON body. */
export function send<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  return api<T>(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/**
 * Saves what a protected URL answers as a file (a plain link cannot carry the access token).
 * `onProgress` hears the bytes received so far as the answer streams in (a long export shows it is
 * under way); resolves with the file's name and size once saved.
 */
export async function download(
  path: string,
  fallbackName: string,
  init: RequestInit = {},
  onProgress?: (bytes: number) => void,
): Promise<{ filename: string; bytes: number }> {
  const response = await authorized(path, init);
  if (!response.ok) throw new ApiError(response.status, await json(response));
  // The service names the file (audit-<time>.csv); keep its name.
  const disposition = response.headers.get('content-disposition') ?? '';
  const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
  // A fetch body's chunks are never on a shared buffer: typed so, as Blob takes them.
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let received = 0;
  const reader = response.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(read.value as Uint8Array<ArrayBuffer>);
    received += read.value.byteLength;
    onProgress?.(received);
  }
  const type = response.headers.get('content-type') ?? 'application/octet-stream';
  const url = URL.createObjectURL(new Blob(chunks, { type }));
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return { filename, bytes: received };
}

/** Ends the session on the server (refreshing first if the access token is due, so the logout counts). */
export async function logout(): Promise<void> {
  if (hasSession()) await authorized('/api/logout', { method: 'POST' }).catch(() => undefined);
  forget();
}
