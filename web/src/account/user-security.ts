import { api, ApiError, send } from '../api.js';
import type { UsersResponse } from '../api-types.js';
import { button, confirmDialog, el, table } from '../dom.js';
import { into } from '../feedback.js';
import { time } from '../format.js';
import { words } from '../i18n.js';
import { changed, type PageContext } from '../page.js';
import { accountWords } from './texts.js';
import type { PasskeysResponse, SessionsResponse } from './types.js';

const messageOf = (error: unknown) => (error instanceof ApiError ? error.full : error instanceof Error ? error.message : String(error));

/**
 * For users:manage holders: a user of the tenant's sessions, each ended or all at once, their
 * second factor removed (a lost phone) and their passkeys listed and removed; the API refuses a user more powerful than the caller.
 * The chosen user is in the URL (`#/account?user=<id>`).
 */
export function userSecurity(ctx: PageContext): HTMLElement {
  const t = accountWords();
  const section = el('section', { id: 'user-security', ariaLabelledBy: 'user-security-title' });
  const chosen = ctx.params.get('user') ?? '';
  void into(section, async () => {
    const { users } = await api<UsersResponse>('/api/users');
    const select = el(
      'select',
      { id: 'security-user' },
      el('option', { value: '', textContent: '–' }),
      ...users.map((user) => el('option', { value: user.id, textContent: user.username })),
    );
    select.value = chosen;
    select.addEventListener('change', () => ctx.navigate(changed(ctx.params, { user: select.value })));
    const body = el('div', { id: 'user-security-body' });
    const user = users.find((candidate) => candidate.id === chosen);
    if (user) draw(body, user.id, user.username);
    return el(
      'div',
      {},
      el('h3', { id: 'user-security-title', textContent: t.userSecurity }),
      el('div', { className: 'toolbar' }, el('label', { htmlFor: 'security-user', textContent: t.user }), select),
      body,
    );
  });
  return section;
}

function draw(target: HTMLElement, userId: string, username: string, notice = ''): void {
  const t = accountWords();
  const base = `/api/users/${encodeURIComponent(userId)}`;
  void into(target, async () => {
    const [{ sessions }, { passkeys }] = await Promise.all([
      api<SessionsResponse>(`${base}/sessions`),
      api<PasskeysResponse>(`${base}/passkeys`),
    ]);
    const error = el('p', { className: 'error', role: 'alert', id: 'user-security-error' });
    const act = (run: () => Promise<unknown>, done: (answer: unknown) => string) =>
      run().then(
        (answer) => draw(target, userId, username, done(answer)),
        (e: unknown) => (error.textContent = messageOf(e)),
      );
    return el(
      'div',
      {},
      notice ? el('p', { role: 'status', id: 'user-security-notice', textContent: notice }) : null,
      table(
        `${t.sessions}: ${username}`,
        [
          [t.created, (row) => time(row.created_at)],
          [t.lastUsed, (row) => time(row.last_used_at)],
          [t.address, (row) => row.ip ?? '–'],
          [t.userAgent, (row) => row.user_agent ?? '–'],
          [t.method, (row) => row.method ?? '–'],
          [
            t.actions,
            (row) =>
              button(
                t.end,
                () =>
                  void act(
                    () => send('DELETE', `${base}/sessions/${encodeURIComponent(row.id)}`),
                    () => `${t.endedCount} 1`,
                  ),
                {
                  ariaLabel: `${t.end}: ${row.user_agent ?? row.id} (${time(row.created_at)})`,
                },
              ),
          ],
        ],
        sessions,
        { id: 'user-sessions' },
      ),
      table(
        `${t.userPasskeys}: ${username}`,
        [
          [t.name, (row) => row.name],
          [t.created, (row) => time(row.created_at)],
          [t.lastUsed, (row) => time(row.last_used_at)],
          [
            t.actions,
            (row) =>
              button(
                t.remove,
                () => {
                  void confirmDialog(`${t.remove}: ${row.name} (${username})?`, t.remove, words().cancel).then((yes) => {
                    if (yes)
                      void act(
                        () => send('DELETE', `${base}/passkeys/${encodeURIComponent(row.id)}`),
                        () => t.passkeyRemoved,
                      );
                  });
                },
                { ariaLabel: `${t.remove} ${row.name}`, className: 'remove-user-passkey' },
              ),
          ],
        ],
        passkeys,
        { id: 'user-passkeys' },
      ),
      el(
        'div',
        { className: 'toolbar' },
        sessions.length > 0
          ? button(
              t.endAll,
              () =>
                void act(
                  () => send<{ ended: number }>('DELETE', `${base}/sessions`),
                  (answer) => `${t.endedCount} ${(answer as { ended: number }).ended}`,
                ),
              { id: 'user-end-all' },
            )
          : null,
        button(
          t.removeSecondFactor,
          () => {
            void confirmDialog(`${t.removeSecondFactor}: ${username}?`, t.remove, words().cancel).then((yes) => {
              if (yes)
                void act(
                  () => send('DELETE', `${base}/mfa`),
                  () => t.removed,
                );
            });
          },
          { id: 'user-remove-mfa' },
        ),
      ),
      error,
    );
  });
}
