import { api, hasSession, login, logout } from './api.js';
import { el } from './dom.js';
import { renderExplore } from './explore.js';
import { language, toggleLanguage, words } from './i18n.js';
import { renderAdmin, renderAlerts, renderAudit } from './pages.js';

/**
 * The console's shell: sign-in, a header whose navigation shows only the pages the user's
 * permissions open, and a router over the URL's hash (`#/explore?…`, `#/alerts`, `#/audit?…`,
 * `#/admin`), so links share a view and the back button works.
 */

interface Me {
  username: string;
  permissions: string[];
}

const root = document.getElementById('app')!;

interface Page {
  path: string;
  label: () => string;
  /** Any one of these opens the page. */
  needs: string[];
}

const PAGES: Page[] = [
  { path: 'explore', label: () => words().explore, needs: ['logs:read'] },
  { path: 'alerts', label: () => words().alerts, needs: ['alerts:read'] },
  { path: 'audit', label: () => words().audit, needs: ['audit:read'] },
  { path: 'admin', label: () => words().admin, needs: ['users:manage', 'roles:manage', 'tenants:manage'] },
];

function showSignIn(message = ''): void {
  const t = words();
  document.documentElement.lang = language();
  const user = el('input', { id: 'username', name: 'username', autocomplete: 'username', required: true });
  const pass = el('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = el('p', { className: 'error', role: 'alert', textContent: message });
  const form = el(
    'form',
    { className: 'signin' },
    el('h1', { textContent: t.title }),
    el('label', { htmlFor: 'username', textContent: t.user }),
    user,
    el('label', { htmlFor: 'password', textContent: t.pass }),
    pass,
    el('button', { type: 'submit', textContent: t.signIn }),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    login(user.value, pass.value).then(start, (e: unknown) => (error.textContent = e instanceof Error ? e.message : String(e)));
  });
  root.replaceChildren(el('main', {}, form));
  user.focus();
}

let me: Me | undefined;
let stopPage: () => void = () => undefined;

function route(): { path: string; params: URLSearchParams } {
  const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { path, params: new URLSearchParams(query) };
}

function navigate(path: string, params: URLSearchParams): void {
  const query = params.toString();
  location.hash = `#/${path}${query ? `?${query}` : ''}`;
}

async function render(): Promise<void> {
  if (!me) return;
  const t = words();
  document.documentElement.lang = language();
  const permissions = new Set(me.permissions);
  const open = PAGES.filter((page) => page.needs.some((permission) => permissions.has(permission)));
  let { path, params } = route();
  if (!PAGES.some((page) => page.path === path)) {
    path = open[0]?.path ?? 'explore';
    params = new URLSearchParams();
  }
  const page = PAGES.find((candidate) => candidate.path === path)!;
  stopPage();
  stopPage = () => undefined;

  const signOut = el('button', { type: 'button', id: 'signout', textContent: t.signOut });
  signOut.addEventListener('click', () => void logout().then(() => ((me = undefined), showSignIn())));
  const languageButton = el('button', { type: 'button', id: 'language', textContent: t.language, lang: language() === 'id' ? 'en' : 'id' });
  languageButton.addEventListener('click', () => {
    toggleLanguage();
    void render();
  });
  const nav = el(
    'nav',
    { ariaLabel: t.title },
    el(
      'ul',
      {},
      ...open.map((item) =>
        el(
          'li',
          {},
          el('a', {
            href: `#/${item.path}`,
            textContent: item.label(),
            id: `nav-${item.path}`,
            ariaCurrent: item === page ? 'page' : null,
          }),
        ),
      ),
    ),
  );
  const main = el('main', { id: 'content' });
  root.replaceChildren(
    el(
      'header',
      {},
      el('h1', { textContent: t.title }),
      nav,
      el('span', { id: 'whoami', textContent: me.username }),
      languageButton,
      signOut,
    ),
    main,
  );

  if (!open.includes(page)) {
    main.replaceChildren(el('p', { className: 'error', role: 'alert', id: 'not-allowed', textContent: t.notAllowed }));
    return;
  }
  const to = (next: URLSearchParams) => navigate(page.path, next);
  if (page.path === 'explore') {
    const view = renderExplore(params, to);
    stopPage = view.stop;
    main.replaceChildren(view.node);
  } else if (page.path === 'alerts') main.replaceChildren(await renderAlerts());
  else if (page.path === 'audit') main.replaceChildren(await renderAudit(params, to));
  else main.replaceChildren(await renderAdmin(permissions));
}

async function start(): Promise<void> {
  me = await api<Me>('/api/me');
  await render();
}

window.addEventListener('hashchange', () => void render());
window.addEventListener('gerbang:signed-out', () => {
  me = undefined;
  stopPage();
  showSignIn();
});

if (hasSession()) start().catch(() => showSignIn());
else showSignIn();
