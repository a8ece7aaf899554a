import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const JWT_SHAPE = /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/;

function randomText(length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += ALPHABET[randomInt(ALPHABET.length)];
  return text;
}

/** Spec 2.3: 3 characters, the JWT, 5 characters. The prefix never starts like a JWT. */
export function wrapToken(jwt: string): string {
  let prefix = randomText(3);
  while (prefix.startsWith('e')) prefix = randomText(3);
  return `${prefix}${jwt}${randomText(5)}`;
}

/**
 * The JWT inside an Authorization value: the wrapped form, `Bearer <jwt>`, `Bearer <wrapped>` or a
 * bare JWT. Undefined when the value holds nothing shaped like a JWT.
 */
export function unwrapToken(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let text = value.trim();
  if (/^bearer\s+/i.test(text)) text = text.replace(/^bearer\s+/i, '');
  if (text.length > 16_384) return undefined;
  if (JWT_SHAPE.test(text)) return text;
  const inner = text.slice(3, -5);
  return text.length > 8 && JWT_SHAPE.test(inner) ? inner : undefined;
}
