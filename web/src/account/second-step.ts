import { startAuthentication } from '@simplewebauthn/browser';
import { ApiError, post, signedIn } from '../api.js';
import type { LoginResponse } from '../api-types.js';
import { button, el } from '../dom.js';
import { words } from '../i18n.js';
import { enrolment } from './enrol.js';
import { accountWords } from './texts.js';
import type { PasskeyOptions } from './types.js';

/** What the 401 of a right password carries when a second factor is needed (docs/logs-api.md). */
interface MfaNext {
  challenge?: string;
  enrolment_token?: string;
}

const messageOf = (error: unknown) => (error instanceof ApiError ? error.full : error instanceof Error ? error.message : String(error));

/**
 * Sign-in's second step, when the password's answer asks for one: the code prompt (a TOTP or a
 * recovery code), or enrolment for an account that must have a second factor first. False when the
 * error is something else (the sign-in form shows it).
 */
export function continueSignIn(error: unknown, root: HTMLElement, start: () => Promise<void>, back: (message: string) => void): boolean {
  if (!(error instanceof ApiError) || error.status !== 401) return false;
  const next = error.body.mfa as MfaNext | undefined;
  if (next?.challenge) {
    root.replaceChildren(el('main', { id: 'content' }, codePrompt(next.challenge, start, back)));
    root.querySelector<HTMLInputElement>('#mfa-code')?.focus();
    return true;
  }
  if (next?.enrolment_token) {
    const token = next.enrolment_token;
    const t = accountWords();
    const main = el(
      'main',
      { id: 'content', className: 'signin-wide' },
      el('h1', { textContent: words().title }),
      el('p', { className: 'notice', id: 'enrol-required', textContent: t.enrolRequired }),
      enrolment(
        (path, body) => post(path, body, token),
        (login) => {
          if (!login) return back('');
          signedIn(login);
          void start();
        },
      ),
      button(t.backToSignIn, () => back(''), { className: 'link' }),
    );
    root.replaceChildren(main);
    return true;
  }
  return false;
}

function codePrompt(challenge: string, start: () => Promise<void>, back: (message: string) => void): HTMLElement {
  const t = accountWords();
  const code = el('input', {
    id: 'mfa-code',
    name: 'code',
    autocomplete: 'one-time-code',
    required: true,
    maxLength: 32,
    ariaDescribedBy: 'mfa-intro',
  });
  const error = el('p', { className: 'error', role: 'alert', id: 'mfa-error' });
  const submit = el('button', { type: 'submit', id: 'mfa-verify', textContent: t.verify });
  const form = el(
    'form',
    { className: 'signin', ariaLabelledBy: 'mfa-title' },
    el('h1', { id: 'mfa-title', textContent: t.codeTitle }),
    el('p', { id: 'mfa-intro', textContent: t.codeIntro }),
    el('label', { htmlFor: 'mfa-code', textContent: t.code }),
    code,
    submit,
    error,
    button(t.backToSignIn, () => back(''), { className: 'link', id: 'mfa-back' }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    error.textContent = '';
    post<LoginResponse>('/api/login/mfa', { challenge, code: code.value })
      .then((answer) => {
        signedIn(answer);
        return start();
      })
      .catch((e: unknown) => {
        // A spent or expired challenge: the password again.
        if (e instanceof ApiError && e.full.startsWith('invalid token')) return back(t.challengeEnded);
        error.textContent = messageOf(e);
        code.select();
      })
      .finally(() => (submit.disabled = false));
  });
  return form;
}

/** "Sign in with a passkey", offered where the browser has WebAuthn; the passkey is both factors. */
export function passkeySignIn(start: () => Promise<void>, show: (message: string) => void): HTMLElement | null {
  if (typeof window.PublicKeyCredential !== 'function') return null;
  const t = accountWords();
  const action = button(
    t.passkeySignIn,
    () => {
      action.disabled = true;
      show('');
      (async () => {
        const { challenge_id: challengeId, options } = await post<PasskeyOptions>('/api/login/passkey/options');
        const credential = await startAuthentication({ optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'] });
        signedIn(await post<LoginResponse>('/api/login/passkey', { challenge_id: challengeId, credential }));
        await start();
      })()
        .catch((e: unknown) => show(e instanceof ApiError ? e.full : `${t.passkeyFailed}: ${messageOf(e)}`))
        .finally(() => (action.disabled = false));
    },
    { id: 'passkey-signin', className: 'secondary' },
  );
  return action;
}
