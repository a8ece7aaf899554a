import { api, ApiError, hasSession, login, logout } from './api.js';

const texts = {
  en: {
    title: 'Gerbang console',
    user: 'Username',
    pass: 'Password',
    signIn: 'Sign in',
    signOut: 'Sign out',
    search: 'Search',
    query: 'Query',
    none: 'No entries',
    total: 'entries',
  },
  id: {
    title: 'Konsol Gerbang',
    user: 'Nama pengguna',
    pass: 'Kata sandi',
    signIn: 'Masuk',
    signOut: 'Keluar',
    search: 'Cari',
    query: 'Kueri',
    none: 'Tidak ada entri',
    total: 'entri',
  },
};
const lang: keyof typeof texts = (localStorage.getItem('gerbang.lang') ?? navigator.language).startsWith('id') ? 'id' : 'en';
const t = texts[lang];
document.documentElement.lang = lang;

const root = document.getElementById('app')!;
const cell = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value as string);

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Record<string, unknown> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props) as HTMLElementTagNameMap[K];
  node.append(...children);
  return node;
}

function showSignIn(message = ''): void {
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
    login(user.value, pass.value).then(showExplore, (e: unknown) => (error.textContent = e instanceof Error ? e.message : String(e)));
  });
  root.replaceChildren(el('main', {}, form));
  user.focus();
}

async function showExplore(): Promise<void> {
  const me = await api<{ username: string; roles: string[] }>('/api/me');
  const params = new URLSearchParams(location.hash.slice(1));
  const query = el('input', { id: 'query', value: params.get('q') ?? '', type: 'search' });
  const status = el('p', { id: 'status', role: 'status' });
  const tbody = el('tbody');
  const signOut = el('button', { type: 'button', id: 'signout', textContent: t.signOut });
  signOut.addEventListener('click', () => void logout().then(() => showSignIn()));
  const form = el(
    'form',
    { className: 'query', role: 'search' },
    el('label', { htmlFor: 'query', textContent: t.query }),
    query,
    el('button', { type: 'submit', textContent: t.search }),
  );
  const run = async () => {
    location.hash = new URLSearchParams({ q: query.value }).toString();
    try {
      const answer = await api<{ data: Record<string, unknown>[]; total: number }>('/api/v1/logs/list/paginate', {
        method: 'POST',
        body: JSON.stringify({ query: query.value, limit: 100 }),
      });
      status.textContent = answer.total ? `${answer.total} ${t.total}` : t.none;
      tbody.replaceChildren(
        ...answer.data.map((row) =>
          el('tr', {}, ...['@timestamp', 'level', 'service', 'host', 'message'].map((f) => el('td', { textContent: cell(row[f]) }))),
        ),
      );
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return showSignIn();
      const position = e instanceof ApiError && typeof e.body.position === 'number' ? ` (@${e.body.position})` : '';
      status.textContent = (e instanceof Error ? e.message : String(e)) + position;
      tbody.replaceChildren();
    }
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void run();
  });
  const table = el(
    'table',
    {},
    el(
      'thead',
      {},
      el('tr', {}, ...['@timestamp', 'level', 'service', 'host', 'message'].map((h) => el('th', { scope: 'col', textContent: h }))),
    ),
    tbody,
  );
  root.replaceChildren(
    el('header', {}, el('h1', { textContent: t.title }), el('span', { id: 'whoami', textContent: me.username }), signOut),
    el('main', {}, form, status, table),
  );
  await run();
}

if (hasSession()) showExplore().catch(() => showSignIn());
else showSignIn();
