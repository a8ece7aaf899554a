import { dict } from '../dict.js';
export type Language = 'id' | 'en';

/** Indonesian unless the client prefers English (Accept-Language, q-values honoured). */
export function pickLanguage(acceptLanguage: string | undefined): Language {
  if (!acceptLanguage) return 'id';
  let best: { lang: Language; q: number } = { lang: 'id', q: 0 };
  for (const part of acceptLanguage.split(',')) {
    const [tag = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.find((p) => p.trim().startsWith('q='));
    const q = qParam ? Number(qParam.trim().slice(2)) : 1;
    const base = tag.split('-')[0];
    if ((base === 'en' || base === 'id') && Number.isFinite(q) && q > best.q) best = { lang: base, q };
  }
  return best.lang;
}

export interface Localized {
  readonly id: string;
  readonly en: string;
}

/** Fills `{name}` placeholders. */
export function localize(text: Localized, lang: Language, params: Record<string, string | number> = dict()): string {
  return text[lang].replace(/\{(\w+)\}/g, (whole, key: string) => (key in params ? String(params[key]) : whole));
}
