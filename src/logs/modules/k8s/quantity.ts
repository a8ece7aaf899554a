import { dict } from '../../../shared/dict.js';
/**
 * Kubernetes resource quantities ("250m", "3880Mi", "16Gi", "1.5", "137349282n", "1e3") as numbers.
 * Grammar: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/
 * A console wants numbers it can add and compare, so the API answers bytes and millicores.
 */
const SUFFIX = dict<number>({
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
});
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The quantity in base units (cores, bytes, count); undefined when the text is not a quantity. */
export function parseQuantity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = QUANTITY.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]);
  if (match[2] !== undefined) return value * 10 ** Number(match[2].slice(1));
  return value * SUFFIX[match[3] ?? '']!;
}

/** CPU in millicores, rounded ("250m" -> 250, "2" -> 2000, "137349282n" -> 137). */
export function cpuMillicores(text: string | undefined): number | undefined {
  const cores = parseQuantity(text);
  return cores === undefined ? undefined : Math.round(cores * 1000);
}

/** Memory (or any count) in whole units, rounded ("3880Mi" -> 4068474880, "110" -> 110). */
export function wholeUnits(text: string | undefined): number | undefined {
  const value = parseQuantity(text);
  return value === undefined ? undefined : Math.round(value);
}
