/** What the shell gives a page, and what a page gives back. */

export interface PageContext {
  /** The page's part of the URL (`#/page?these`). */
  params: URLSearchParams;
  /** Changes the URL (a new history entry), which renders the page again. */
  navigate(params: URLSearchParams): void;
  /** Whether the signed-in user holds the permission (as /api/me said at sign-in). */
  can(permission: string): boolean;
}

export interface View {
  node: HTMLElement;
  /** Stops timers (live tail, refreshing charts) when the user leaves the page. */
  stop?: () => void;
}

/** The URL's parameters with some changed (null or '' removes one). */
export function changed(params: URLSearchParams, changes: Record<string, string | null>): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === '') next.delete(key);
    else next.set(key, value);
  }
  return next;
}

/** Runs `tick` now and every `ms` until stopped; a tick still running is not started again. */
export function every(ms: number, tick: () => Promise<void>): () => void {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    void tick().finally(() => (running = false));
  };
  run();
  const timer = setInterval(run, ms);
  return () => clearInterval(timer);
}
