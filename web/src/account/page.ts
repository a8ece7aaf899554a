import { startRegistration } from '@simplewebauthn/browser';
import { api, ApiError, send } from '../api.js';
import { button, confirmDialog, el, table } from '../dom.js';
import { into } from '../feedback.js';
import { time } from '../format.js';
import { words } from '../i18n.js';
import type { PageContext, View } from '../page.js';
import { enrolment, recoveryCodes } from './enrol.js';
import { accountWords } from './texts.js';
import { userSecurity } from './user-security.js';
import type { MfaRecoveryCodes, MfaStatus, PasskeyOptions, PasskeysResponse, SessionsResponse } from './types.js';

const messageOf = (error: unknown) => (error instanceof ApiError ? error.full : error instanceof Error ? error.message : String(error));

/**
 * The signed-in person's own account: the second factor (an authenticator app, with its recovery
 * codes), passkeys, and the sessions they are signed in with (docs/console.md "Account"); for
 * users:manage holders, a user's sessions and second factor too.
 */
export function renderAccount(ctx: PageContext): View {
  const t = accountWords();
  const mfa = el('section', { id: 'account-mfa', ariaLabelledBy: 'account-mfa-title' });
  const passkeys = el('section', { id: 'account-passkeys', ariaLabelledBy: 'account-passkeys-title' });
  const sessions = el('section', { id: 'account-sessions', ariaLabelledBy: 'account-sessions-title' });
  const node = el(
    'div',
    { id: 'account-page' },
    el('h2', { textContent: t.account }),
    mfa,
    passkeys,
    sessions,
    ctx.can('users:manage') ? userSecurity(ctx) : null,
  );
  drawMfa(mfa);
  drawPasskeys(passkeys);
  drawSessions(sessions);
  return { node };
}

function drawMfa(section: HTMLElement, notice = ''): void {
  const t = accountWords();
  void into(section, async () => {
    const status = await api<MfaStatus>('/api/mfa');
    const box = el(
      'div',
      {},
      el('h3', { id: 'account-mfa-title', textContent: t.secondFactor }),
      notice ? el('p', { role: 'status', id: 'mfa-notice', textContent: notice }) : null,
      el('p', { id: 'totp-state', textContent: status.totp ? t.totpOn : t.totpOff }),
      status.required ? el('p', { className: 'muted', textContent: t.required }) : null,
    );
    if (!status.totp) {
      box.append(
        button(
          t.setUp,
          () => {
            const widget = enrolment(
              (path, body) => send('POST', path, body),
              () => drawMfa(section),
            );
            section.replaceChildren(widget);
          },
          { id: 'totp-setup' },
        ),
      );
      return box;
    }
    box.append(el('p', { id: 'recovery-left', textContent: `${t.recoveryLeft}: ${status.recovery_codes_left}` }));
    const code = el('input', {
      id: 'totp-remove-code',
      autocomplete: 'one-time-code',
      inputMode: 'numeric',
      required: true,
      maxLength: 32,
    });
    const error = el('p', { className: 'error', role: 'alert' });
    const form = el(
      'form',
      { id: 'totp-remove', className: 'toolbar' },
      el('label', { htmlFor: 'totp-remove-code', textContent: t.removeCode }),
      code,
      el('button', { type: 'submit', textContent: t.removeTotp }),
      error,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      send('DELETE', '/api/mfa/totp', { code: code.value }).then(
        () => drawMfa(section, t.removed),
        (e: unknown) => (error.textContent = messageOf(e)),
      );
    });
    box.append(form, regenerateForm(section));
    return box;
  });
}

/** Ten new recovery codes with a current code: shown this once with a download, as at enrolment. */
function regenerateForm(section: HTMLElement): HTMLElement {
  const t = accountWords();
  const code = el('input', { id: 'recovery-new-code', autocomplete: 'one-time-code', inputMode: 'numeric', required: true, maxLength: 32 });
  const error = el('p', { className: 'error', role: 'alert', id: 'recovery-new-error' });
  const form = el(
    'form',
    { id: 'recovery-new', className: 'toolbar' },
    el('label', { htmlFor: 'recovery-new-code', textContent: t.newRecoveryCode }),
    code,
    el('button', { type: 'submit', textContent: t.newRecoveryCodes }),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    send<MfaRecoveryCodes>('POST', '/api/mfa/recovery-codes', { code: code.value }).then(
      (answer) => {
        section.replaceChildren(recoveryCodes(answer.recovery_codes, () => drawMfa(section)));
        section.querySelector<HTMLElement>('#recovery-download')?.focus();
      },
      (e: unknown) => (error.textContent = messageOf(e)),
    );
  });
  return form;
}

function drawPasskeys(section: HTMLElement): void {
  const t = accountWords();
  void into(section, async () => {
    const { passkeys } = await api<PasskeysResponse>('/api/passkeys');
    const error = el('p', { className: 'error', role: 'alert', id: 'passkey-error' });
    const name = el('input', { id: 'passkey-name', maxLength: 64, placeholder: 'Passkey' });
    const add = el('button', { type: 'submit', id: 'passkey-add', textContent: t.addPasskey });
    const form = el(
      'form',
      { className: 'toolbar', id: 'passkey-form' },
      el('label', { htmlFor: 'passkey-name', textContent: t.passkeyName }),
      name,
      add,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      add.disabled = true;
      error.textContent = '';
      (async () => {
        const { challenge_id: challengeId, options } = await send<PasskeyOptions>('POST', '/api/passkeys/options');
        const credential = await startRegistration({ optionsJSON: options as Parameters<typeof startRegistration>[0]['optionsJSON'] });
        await send('POST', '/api/passkeys', {
          challenge_id: challengeId,
          credential,
          ...(name.value.trim() ? { name: name.value.trim() } : {}),
        });
        drawPasskeys(section);
      })()
        .catch((e: unknown) => (error.textContent = messageOf(e)))
        .finally(() => (add.disabled = false));
    });
    const list =
      passkeys.length === 0
        ? el('p', { className: 'muted', id: 'no-passkeys', textContent: t.noPasskeys })
        : table(
            t.passkeys,
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
                      void confirmDialog(`${t.remove}: ${row.name}?`, t.remove, words().cancel).then(async (yes) => {
                        if (!yes) return;
                        await send('DELETE', `/api/passkeys/${encodeURIComponent(row.id)}`).catch(
                          (e: unknown) => (error.textContent = messageOf(e)),
                        );
                        drawPasskeys(section);
                      });
                    },
                    { ariaLabel: `${t.remove} ${row.name}` },
                  ),
              ],
            ],
            passkeys,
            { id: 'passkeys' },
          );
    const supported = typeof window.PublicKeyCredential === 'function';
    return el(
      'div',
      {},
      el('h3', { id: 'account-passkeys-title', textContent: t.passkeys }),
      el('p', { className: 'muted', textContent: t.passkeysIntro }),
      list,
      supported ? form : null,
      error,
    );
  });
}

function drawSessions(section: HTMLElement, notice = ''): void {
  const t = accountWords();
  void into(section, async () => {
    const { sessions } = await api<SessionsResponse>('/api/sessions');
    const error = el('p', { className: 'error', role: 'alert' });
    const others = sessions.filter((row) => !row.current).length;
    return el(
      'div',
      {},
      el('h3', { id: 'account-sessions-title', textContent: t.sessions }),
      el('p', { className: 'muted', textContent: t.sessionsIntro }),
      notice ? el('p', { role: 'status', id: 'sessions-notice', textContent: notice }) : null,
      table(
        t.sessions,
        [
          [t.created, (row) => time(row.created_at)],
          [t.lastUsed, (row) => time(row.last_used_at)],
          [t.address, (row) => row.ip ?? '–'],
          [t.userAgent, (row) => row.user_agent ?? '–'],
          [t.method, (row) => row.method ?? '–'],
          [
            t.actions,
            (row) =>
              row.current
                ? el('strong', { textContent: t.thisSession })
                : button(
                    t.end,
                    () => {
                      send('DELETE', `/api/sessions/${encodeURIComponent(row.id)}`).then(
                        () => drawSessions(section),
                        (e: unknown) => (error.textContent = messageOf(e)),
                      );
                    },
                    { ariaLabel: `${t.end}: ${row.user_agent ?? row.id} (${time(row.created_at)})`, className: 'end-session' },
                  ),
          ],
        ],
        sessions,
        { id: 'sessions' },
      ),
      others > 0
        ? button(
            t.endOthers,
            () => {
              send<{ ended: number }>('DELETE', '/api/sessions').then(
                (answer) => drawSessions(section, `${t.endedCount} ${answer.ended}`),
                (e: unknown) => (error.textContent = messageOf(e)),
              );
            },
            { id: 'end-others' },
          )
        : null,
      error,
    );
  });
}
