import { button } from './dom.js';
import { language, words } from './i18n.js';

/**
 * Times in the browser's time zone (WIB for most of the platform's users) until the user switches
 * to UTC with the header's switch; the choice is kept in this browser. Every time shown carries its
 * milliseconds and its zone, and the time inputs read and write the same zone.
 */
const ZONE_KEY = 'gerbang.zone';

export function usesUtc(): boolean {
  return localStorage.getItem(ZONE_KEY) === 'utc';
}

/** The zone's short name at a moment: `UTC`, or the browser's (`WIB` in Indonesian, `GMT+7` in English). */
export function zoneName(at = new Date()): string {
  if (usesUtc()) return 'UTC';
  const locale = language() === 'id' ? 'id-ID' : 'en-US';
  const part = new Intl.DateTimeFormat(locale, { timeZoneName: 'short' }).formatToParts(at).find((p) => p.type === 'timeZoneName');
  return part?.value ?? 'UTC';
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** `YYYY-MM-DDTHH:mm:ss.SSS` of a moment in the chosen zone. */
function wallClock(at: Date): string {
  const utc = usesUtc();
  const [y, mo, d, h, mi, s, ms] = utc
    ? [
        at.getUTCFullYear(),
        at.getUTCMonth(),
        at.getUTCDate(),
        at.getUTCHours(),
        at.getUTCMinutes(),
        at.getUTCSeconds(),
        at.getUTCMilliseconds(),
      ]
    : [at.getFullYear(), at.getMonth(), at.getDate(), at.getHours(), at.getMinutes(), at.getSeconds(), at.getMilliseconds()];
  return `${y}-${pad(mo + 1)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}.${pad(ms, 3)}`;
}

/** An ISO time as shown: `2026-11-29 09:05:40.123 WIB`. */
export function formatTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${wallClock(at).replace('T', ' ')} ${zoneName(at)}`;
}

/** A moment as a `datetime-local` input's value (to the second) in the chosen zone. */
export function inputValue(ms: number): string {
  return wallClock(new Date(ms)).slice(0, 19);
}

/** A `datetime-local` input's value, read in the chosen zone, as an ISO time; null when empty or invalid. */
export function inputTime(value: string): string | null {
  if (!value) return null;
  const at = new Date(usesUtc() ? `${value}Z` : value);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

/** The header's switch between the browser's zone and UTC; `onChange` draws the page again. */
export function zoneSwitch(onChange: () => void): HTMLButtonElement {
  const t = words();
  const node = button(
    usesUtc() ? t.localTime : 'UTC',
    () => {
      if (usesUtc()) localStorage.removeItem(ZONE_KEY);
      else localStorage.setItem(ZONE_KEY, 'utc');
      onChange();
    },
    { id: 'time-zone' },
  );
  node.ariaPressed = String(usesUtc());
  node.title = `${t.timesIn} ${zoneName()}`;
  return node;
}
