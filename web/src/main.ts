import { renderAccount } from './account/page.js';
import { renderApiKeys } from './admin/api-keys.js';
import { renderAdmin } from './admin/page.js';
import { renderAlerts } from './alerts-page.js';
import { api, chooseTenant, hasSession, logout, tenant } from './api.js';
import type { Me, TenantsResponse } from './api-types.js';
import { renderApm } from './apm/page.js';
import { renderAudit } from './audit-page.js';
import { renderDashboards } from './dashboards-page.js';
import { button, el } from './dom.js';
import { renderExplore } from './explore/page.js';
import { language, toggleLanguage, words, type Texts } from './i18n.js';
import { applyTheme, themeSwitch } from './theme.js';
import { renderInfra } from './infra-page.js';
import type { PageContext, View } from './page.js';
import { showSignIn } from './signin.js';
import { zoneSwitch } from './time-zone.js';

// The chosen theme (or the system's) from the first paint, the sign-in page included.
applyTheme();

/**
 * The console's shell: sign-in, a header whose navigation offers only the pages the user's
 * permissions open (a page reached by URL without them says so), the tenant switcher for
 * tenants:manage, the language, and a router over the URL's hash (`#/<page>?<its state>`), so every
 * view is a link and the back button works.
 */

interface Page {
  path: string;
  label: keyof Texts;
  /** Any one of these opens the page; empty: every signed-in user. */
  needs: string[];
  render: (ctx: PageContext) => View;
}

const PAGES: Page[] = [
  { path: 'explore', label: 'explore', needs: ['logs:read'], render: renderExplore },
  { path: 'dashboards', label: 'dashboards', needs: ['dashboard:read'], render: renderDashboards },
  { path: 'alerts', label: 'alerts', needs: ['alerts:read'], render: renderAlerts },
  { path: 'apm', label: 'apm', needs: ['dashboard:read'], render: renderApm },
  { path: 'infra', label: 'infrastructure', needs: ['dashboard:read'], render: renderInfra },
  { path: 'audit', label: 'audit', needs: ['audit:read'], render: renderAudit },
  { path: 'admin', label: 'admin', needs: ['users:manage', 'roles:manage', 'tenants:manage'], render: renderAdmin },
  { path: 'keys', label: 'apiKeys', needs: [], render: (ctx) => renderApiKeys(ctx, me?.permissions ?? []) },
  { path: 'account', label: 'account', needs: [], render: renderAccount },
];

const root = document.getElementById('app')!;
let me: Me | undefined;
let stopPage: () => void = () => undefined;
let shownPath = '';

function route(): { path: string; params: URLSearchParams } {
  const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { path, params: new URLSearchParams(query) };
}

/** Tenants:manage holders act in any tenant: the choice goes out as X-Tenant-Id on every call. */
function tenantSwitcher(current: Me): HTMLElement | null {
  if (!current.permissions.includes('tenants:manage')) return null;
  const t = words();
  const select = el('select', { id: 'tenant' }, el('option', { value: current.tenant_id, textContent: current.tenant_id }));
  select.value = tenant() ?? current.tenant_id;
  void api<TenantsResponse>('/api/tenants').then(
    ({ tenants }) => {
      // Tenant names are unique: the name says which.
      select.replaceChildren(...tenants.map((item) => el('option', { value: item.id, textContent: item.name })));
      select.value = tenant() ?? current.tenant_id;
    },
    () => undefined,
  );
  select.addEventListener('change', () => {
    chooseTenant(select.value === current.tenant_id ? null : select.value);
    render(true);
  });
  return el('span', { className: 'tenant' }, el('label', { htmlFor: 'tenant', textContent: t.tenant }), select);
}

function render(force = false): void {
  if (!me) return;
  const current = me;
  const t = words();
  document.documentElement.lang = language();
  const permissions = new Set(current.permissions);
  const open = PAGES.filter((page) => page.needs.length === 0 || page.needs.some((permission) => permissions.has(permission)));
  let { path, params } = route();
  if (!PAGES.some((page) => page.path === path)) {
    path = open[0]!.path;
    params = new URLSearchParams();
    history.replaceState(null, '', `#/${path}`);
  }
  const page = PAGES.find((candidate) => candidate.path === path)!;
  // The page is drawn anew on every change of its URL: the focused control keeps the focus.
  const focusedId = path === shownPath ? document.activeElement?.id : undefined;
  stopPage();
  stopPage = () => undefined;

  const signOut = button(
    t.signOut,
    () => {
      me = undefined;
      stopPage();
      void logout().then(() => showSignIn(root, start));
    },
    { id: 'signout' },
  );
  const languageButton = button(
    t.language,
    () => {
      toggleLanguage();
      render(true);
    },
    { id: 'language', lang: language() === 'id' ? 'en' : 'id' },
  );
  const nav = el(
    'nav',
    { ariaLabel: t.pages, id: 'pages' },
    el(
      'ul',
      {},
      ...open.map((item) =>
        el(
          'li',
          {},
          el('a', {
            href: `#/${item.path}`,
            textContent: t[item.label],
            id: `nav-${item.path}`,
            ariaCurrent: item === page ? 'page' : null,
          }),
        ),
      ),
    ),
  );
  const main = el('main', { id: 'content', tabIndex: -1 });
  root.replaceChildren(
    el('a', { href: '#content', className: 'skip', textContent: t.skipToContent, id: 'skip' }),
    el(
      'header',
      {},
      el(
        'div',
        { className: 'bar' },
        el('h1', { textContent: t.title }),
        tenantSwitcher(current),
        el('span', { id: 'whoami', textContent: current.username }),
        languageButton,
        themeSwitch(),
        zoneSwitch(() => render(true)),
        signOut,
      ),
      nav,
    ),
    main,
  );
  // The skip link moves focus without touching the hash (which is the router's).
  root.querySelector('#skip')!.addEventListener('click', (event) => {
    event.preventDefault();
    main.focus();
  });

  if (!open.includes(page)) {
    main.replaceChildren(el('p', { className: 'error', role: 'alert', id: 'not-allowed', textContent: t.notAllowed }));
    return;
  }
  const view = page.render({
    params,
    navigate: (next) => {
      const query = next.toString();
      location.hash = `#/${page.path}${query ? `?${query}` : ''}`;
    },
    can: (permission) => permissions.has(permission),
  });
  stopPage = view.stop ?? (() => undefined);
  main.replaceChildren(view.node);
  // A new page: focus goes to it (screen readers announce it); a new state of the same page keeps focus.
  if (path !== shownPath && !force && shownPath) main.focus({ preventScroll: true });
  else if (focusedId) document.getElementById(focusedId)?.focus({ preventScroll: true });
  shownPath = path;
}

async function start(): Promise<void> {
  me = await api<Me>('/api/me');
  shownPath = '';
  render();
}

window.addEventListener('hashchange', () => render());
window.addEventListener('gerbang:signed-out', () => {
  if (!me) return;
  me = undefined;
  stopPage();
  showSignIn(root, start, words().sessionEnded);
});

if (hasSession()) start().catch(() => showSignIn(root, start));
else showSignIn(root, start);
