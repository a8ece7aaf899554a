import { continueSignIn, passkeySignIn } from './account/second-step.js';
import { ApiError, login } from './api.js';
import { button, el } from './dom.js';
import { language, toggleLanguage, words } from './i18n.js';

/** The sign-in form; `start` runs once the API has answered with a token pair. */
export function showSignIn(root: HTMLElement, start: () => Promise<void>, message = ''): void {
  const t = words();
  document.documentElement.lang = language();
  const user = el('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const pass = el('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = el('p', { className: 'error', role: 'alert', id: 'signin-error', textContent: message });
  const submit = el('button', { type: 'submit', id: 'signin', textContent: t.signIn });
  const form = el(
    'form',
    { className: 'signin', ariaLabelledBy: 'signin-title' },
    el('h1', { id: 'signin-title', textContent: t.title }),
    el('label', { htmlFor: 'username', textContent: t.user }),
    user,
    el('label', { htmlFor: 'password', textContent: t.pass }),
    pass,
    submit,
    passkeySignIn(start, (text) => (error.textContent = text)),
    error,
    button(
      t.language,
      () => {
        toggleLanguage();
        showSignIn(root, start, error.textContent ?? '');
      },
      { id: 'language', className: 'link', lang: language() === 'id' ? 'en' : 'id' },
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit.disabled = true;
    error.textContent = '';
    login(user.value, pass.value)
      .then(start)
      .catch((e: unknown) => {
        // A right password that needs a second factor (or its enrolment): the next step.
        if (continueSignIn(e, root, start, (text) => showSignIn(root, start, text))) return;
        // The API's message as it says it ("invalid credentials", "rate limit exceeded").
        error.textContent = e instanceof ApiError ? e.full : e instanceof Error ? e.message : String(e);
        pass.select();
      })
      .finally(() => (submit.disabled = false));
  });
  root.replaceChildren(el('main', { id: 'content' }, form));
  user.focus();
}
