// The console's only way to the service: its public HTTP API, with the same tokens as curl.
// The access token lives in memory; the refresh token in sessionStorage, rotated on every refresh
// (the API retires the old one; presenting it twice revokes the session, so a refresh is never
// run twice at once).
const REFRESH_KEY = 'gerbang.refresh';

interface TokenPair {
  access_token: string;
  expires_in: number;
  refresh_token: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(text(body.detail) ?? text(body.message) ?? text(body.error) ?? `HTTP ${status}`);
  }
}

let access: { token: string; expiresAt: number } | undefined;
let refreshing: Promise<boolean> | undefined;

function store(pair: TokenPair): void {
  access = { token: pair.access_token, expiresAt: Date.now() + (pair.expires_in - 30) * 1000 };
  sessionStorage.setItem(REFRESH_KEY, pair.refresh_token);
}

export function hasSession(): boolean {
  return access !== undefined || sessionStorage.getItem(REFRESH_KEY) !== null;
}

async function raw(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  headers.set('accept-language', localStorage.getItem('gerbang.lang') ?? navigator.language);
  return fetch(path, { ...init, headers, credentials: 'omit' });
}

async function json(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return { detail: text };
  }
}

export async function login(username: string, password: string): Promise<void> {
  const response = await raw('/api/login', { method: 'POST', body: JSON.stringify({ username, password }) });
  const body = await json(response);
  if (!response.ok) throw new ApiError(response.status, body);
  store(body.token as TokenPair);
}

function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const token = sessionStorage.getItem(REFRESH_KEY);
    if (!token) return false;
    const response = await raw('/api/refresh', { method: 'POST', body: JSON.stringify({ refresh_token: token }) });
    if (!response.ok) {
      access = undefined;
      sessionStorage.removeItem(REFRESH_KEY);
      return false;
    }
    store((await json(response)).token as TokenPair);
    return true;
  })().finally(() => (refreshing = undefined));
  return refreshing;
}

export async function logout(): Promise<void> {
  if (access) await raw('/api/logout', { method: 'POST', headers: { authorization: `Bearer ${access.token}` } }).catch(() => undefined);
  access = undefined;
  sessionStorage.removeItem(REFRESH_KEY);
}

/** A call with the session's access token, refreshed first when it is about to expire. */
export async function api<T = Record<string, unknown>>(path: string, init: RequestInit = {}): Promise<T> {
  if (!access || access.expiresAt < Date.now()) {
    if (!(await refresh())) throw new ApiError(401, { detail: 'signed out' });
  }
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${access!.token}`);
  const response = await raw(path, { ...init, headers });
  const body = await json(response);
  if (!response.ok) throw new ApiError(response.status, body);
  return body as T;
}

/** Saves what a protected URL answers as a file (a plain link cannot carry the access token). */
export async function download(path: string, filename: string): Promise<void> {
  if (!access || access.expiresAt < Date.now()) {
    if (!(await refresh())) throw new ApiError(401, { detail: 'signed out' });
  }
  const response = await raw(path, { headers: { authorization: `Bearer ${access!.token}` } });
  if (!response.ok) throw new ApiError(response.status, await json(response));
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
