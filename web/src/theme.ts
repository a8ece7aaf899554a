import { button } from './dom.js';
import { words } from './i18n.js';

/**
 * Light or dark: the system's choice (prefers-color-scheme) until the user picks one with the switch,
 * which is kept in this browser. The CSS reads `data-theme` on <html> (style.css, colours by role).
 */
const THEME_KEY = 'gerbang.theme';

type Theme = 'light' | 'dark';

function systemTheme(): Theme {
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function currentTheme(): Theme {
  const chosen = localStorage.getItem(THEME_KEY);
  return chosen === 'light' || chosen === 'dark' ? chosen : systemTheme();
}

/** Applies the chosen theme, if any (none: the CSS follows the system). */
export function applyTheme(): void {
  const chosen = localStorage.getItem(THEME_KEY);
  if (chosen === 'light' || chosen === 'dark') document.documentElement.dataset.theme = chosen;
  else delete document.documentElement.dataset.theme;
}

/** The header's switch: shows the theme it turns to. */
export function themeSwitch(): HTMLButtonElement {
  const t = words();
  const node = button(
    '',
    () => {
      localStorage.setItem(THEME_KEY, currentTheme() === 'dark' ? 'light' : 'dark');
      applyTheme();
      label();
    },
    { id: 'theme' },
  );
  const label = () => {
    const dark = currentTheme() === 'dark';
    node.textContent = dark ? t.lightMode : t.darkMode;
    node.ariaPressed = String(dark);
  };
  label();
  return node;
}
