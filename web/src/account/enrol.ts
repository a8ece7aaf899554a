import { ApiError } from '../api.js';
import type { LoginResponse } from '../api-types.js';
import { button, el } from '../dom.js';
import { qrSvg } from './qr.js';
import { accountWords } from './texts.js';
import type { MfaConfirm, MfaStart } from './types.js';

/** How the widget calls the API: with the session, or with an enrolment-only credential. */
export type Caller = <T>(path: string, body?: unknown) => Promise<T>;

const messageOf = (error: unknown) => (error instanceof ApiError ? error.full : error instanceof Error ? error.message : String(error));

/**
 * Enrolling an authenticator app: the key as a QR code drawn here and as text, the first code to
 * confirm it, then the ten recovery codes, shown this once with a download. `done` runs when the
 * person has seen the codes (with the login answer when an enrolment-only credential was used).
 */
export function enrolment(call: Caller, done: (login: LoginResponse | undefined) => void): HTMLElement {
  const t = accountWords();
  const box = el('section', { id: 'enrol', ariaLabelledBy: 'enrol-title' }, el('h2', { id: 'enrol-title', textContent: t.enrolTitle }));
  const status = el('p', { className: 'error', role: 'alert', id: 'enrol-error' });
  box.append(status);
  void call<MfaStart>('/api/mfa/totp/start').then(
    (started) => {
      const code = el('input', {
        id: 'enrol-code',
        name: 'code',
        autocomplete: 'one-time-code',
        inputMode: 'numeric',
        required: true,
        maxLength: 32,
      });
      const submit = el('button', { type: 'submit', id: 'enrol-confirm', textContent: t.confirm });
      const form = el(
        'form',
        { id: 'enrol-form' },
        el('p', { textContent: t.enrolIntro }),
        qrSvg(started.otpauth_uri, t.qrLabel),
        el('p', {}, `${t.secretKey}: `, el('code', { id: 'totp-secret', textContent: started.secret.replace(/(.{4})/g, '$1 ').trim() })),
        el('div', { className: 'toolbar' }, el('label', { htmlFor: 'enrol-code', textContent: t.firstCode }), code, submit),
      );
      form.addEventListener('submit', (event) => {
        event.preventDefault();
        submit.disabled = true;
        status.textContent = '';
        call<MfaConfirm>('/api/mfa/totp/confirm', { code: code.value }).then(
          (answer) => {
            form.replaceWith(recoveryCodes(answer.recovery_codes, () => done(answer.login)));
            box.querySelector<HTMLElement>('#recovery-download')?.focus();
          },
          (error: unknown) => {
            status.textContent = messageOf(error);
            submit.disabled = false;
            code.select();
          },
        );
      });
      box.append(form);
      code.focus();
    },
    (error: unknown) => (status.textContent = messageOf(error)),
  );
  return box;
}

/** The recovery codes, this once: listed, downloadable as a text file, and a button to go on. */
export function recoveryCodes(codes: string[], next: () => void): HTMLElement {
  const t = accountWords();
  const download = button(
    t.download,
    () => {
      const file = new Blob([`${t.recoveryTitle} (Gerbang)\n\n${codes.join('\n')}\n`], { type: 'text/plain' });
      const url = URL.createObjectURL(file);
      const link = Object.assign(document.createElement('a'), { href: url, download: 'gerbang-recovery-codes.txt' });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    },
    { id: 'recovery-download' },
  );
  return el(
    'div',
    { id: 'recovery', className: 'notice' },
    el('h3', { textContent: t.recoveryTitle }),
    el('p', { textContent: t.recoveryIntro }),
    el('ol', { id: 'recovery-codes' }, ...codes.map((code) => el('li', {}, el('code', { textContent: code })))),
    download,
    button(t.continue, next, { id: 'recovery-done' }),
  );
}
