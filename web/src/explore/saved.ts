import { api, send } from '../api.js';
import type { SavedSearch, SavedSearchesResponse } from '../api-types.js';
import { button, confirmDialog, el } from '../dom.js';
import { problem } from '../feedback.js';
import { words } from '../i18n.js';
import { changed } from '../page.js';
import { savedBody, savedParams } from './search.js';

/**
 * Saved searches: a list (a disclosure) of the tenant's, each a link that opens it; its owner (or a
 * users:manage holder) renames and deletes it there. "Save" keeps the search on screen under a name
 * (a dialog), or, when it came from a saved search the user may change, updates that one.
 */
export function savedSearches(params: URLSearchParams, navigate: (params: URLSearchParams) => void): HTMLElement {
  const t = words();
  const list = el('ul', { id: 'saved-list' });
  const message = el('div', { id: 'saved-message', role: 'status' });
  const current = el('span', { id: 'saved-current', className: 'muted' });
  let known: SavedSearch[] = [];
  const openId = params.get('saved');

  const nameDialog = (title: string, initial: string, save: (name: string) => Promise<void>) => {
    const input = el('input', { id: 'saved-name', value: initial, required: true, maxLength: 200, autocomplete: 'off' });
    const error = el('p', { id: 'saved-name-error', className: 'error', role: 'alert' });
    input.setAttribute('aria-describedby', 'saved-name-error');
    const form = el(
      'form',
      { method: 'dialog' },
      el('h2', { textContent: title }),
      el('label', { htmlFor: 'saved-name', textContent: t.searchName }),
      input,
      error,
      el(
        'div',
        { className: 'actions' },
        el('button', { type: 'submit', id: 'saved-save', textContent: t.save }),
        button(t.cancel, () => dialog.close()),
      ),
    );
    const dialog = el('dialog', { className: 'confirm', ariaLabel: title }, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      save(input.value)
        .then(() => dialog.close())
        .catch((problemError: unknown) => {
          input.setAttribute('aria-invalid', 'true');
          error.replaceChildren(problem(problemError));
          input.focus();
        });
    });
    dialog.addEventListener('close', () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
    input.select();
  };

  const item = (saved: SavedSearch) => {
    const link = el('a', { href: `#/explore?${savedParams(saved).toString()}`, textContent: saved.name, className: 'saved-open' });
    const owner = el('span', { className: 'muted', textContent: ` (${saved.owner.username})` });
    const actions = saved.can_edit
      ? [
          button(
            t.rename,
            () =>
              nameDialog(`${t.rename}: ${saved.name}`, saved.name, async (name) => {
                await send('PUT', `/api/v1/logs/saved-searches/${encodeURIComponent(saved.id)}`, { name });
                await load();
              }),
            { className: 'saved-rename', ariaLabel: `${t.rename}: ${saved.name}` },
          ),
          button(
            t.delete,
            () =>
              void confirmDialog(`${t.delete} "${saved.name}"?`, t.delete, t.cancel).then(async (yes) => {
                if (!yes) return;
                try {
                  await send('DELETE', `/api/v1/logs/saved-searches/${encodeURIComponent(saved.id)}`);
                  if (openId === saved.id) navigate(changed(params, { saved: null }));
                  await load();
                } catch (error) {
                  message.replaceChildren(problem(error));
                }
              }),
            { className: 'saved-delete', ariaLabel: `${t.delete}: ${saved.name}` },
          ),
        ]
      : [];
    const li = el('li', {}, link, owner, ...actions);
    li.dataset.id = saved.id;
    return li;
  };

  const load = async () => {
    known = (await api<SavedSearchesResponse>('/api/v1/logs/saved-searches')).data;
    list.replaceChildren(...(known.length ? known.map(item) : [el('li', { className: 'muted', textContent: t.noSavedSearches })]));
    const open = known.find((saved) => saved.id === openId);
    current.textContent = open ? open.name : '';
  };

  const save = button(
    t.saveSearch,
    () => {
      const open = known.find((saved) => saved.id === openId);
      if (open?.can_edit) {
        // The search came from a saved one this user may change: update it (rename from the list).
        send<SavedSearch>('PUT', `/api/v1/logs/saved-searches/${encodeURIComponent(open.id)}`, savedBody(params, open.name))
          .then(async () => {
            message.textContent = `${t.savedAs} "${open.name}"`;
            await load();
          })
          .catch((error: unknown) => message.replaceChildren(problem(error)));
        return;
      }
      nameDialog(t.saveSearch, open ? `${open.name} (2)` : '', async (name) => {
        const created = await send<SavedSearch>('POST', '/api/v1/logs/saved-searches', savedBody(params, name));
        navigate(changed(params, { saved: created.id }));
      });
    },
    { id: 'save-search' },
  );
  const saveAsNew = button(
    t.saveAsNew,
    () =>
      nameDialog(t.saveAsNew, '', async (name) => {
        const created = await send<SavedSearch>('POST', '/api/v1/logs/saved-searches', savedBody(params, name));
        navigate(changed(params, { saved: created.id }));
      }),
    { id: 'save-search-new', hidden: !openId },
  );

  void load().catch((error: unknown) => message.replaceChildren(problem(error)));
  return el(
    'div',
    { className: 'saved-searches' },
    el('details', { id: 'saved-searches' }, el('summary', { textContent: t.savedSearches }), list),
    current,
    save,
    saveAsNew,
    message,
  );
}
