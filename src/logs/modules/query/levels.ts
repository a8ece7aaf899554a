import { dict } from '../../../shared/dict.js';
/**
 * One set of levels for every way in (docs/logs-api.md "Levels"): OpenTelemetry's six. Syslog names
 * and numbers, OTel severity texts, pino/bunyan numbers and the common spellings of logging
 * libraries map onto it, so `level:warn` finds a `warning` and dashboards count an `err` as an error.
 */
export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Level = (typeof LEVELS)[number];

const NAMES = dict<Level>({
  // syslog (RFC 5424): emerg alert crit err warning notice info debug, and the old names
  emerg: 'fatal',
  emergency: 'fatal',
  panic: 'fatal',
  alert: 'fatal',
  crit: 'fatal',
  critical: 'fatal',
  err: 'error',
  error: 'error',
  warning: 'warn',
  warn: 'warn',
  notice: 'info',
  info: 'info',
  informational: 'info',
  information: 'info',
  debug: 'debug',
  // logging libraries: log4j/logback/.NET/Python/Go/java.util.logging
  fatal: 'fatal',
  severe: 'error',
  dpanic: 'fatal',
  config: 'info',
  fine: 'debug',
  finer: 'trace',
  finest: 'trace',
  verbose: 'trace',
  trace: 'trace',
  all: 'trace',
});

/** Syslog severity numbers 0 (emerg) to 7 (debug). */
const SYSLOG_NUMBERS: readonly Level[] = ['fatal', 'fatal', 'fatal', 'error', 'warn', 'info', 'info', 'debug'];
/** pino and bunyan: 10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal. */
const PINO_NUMBERS = dict<Level>({ '10': 'trace', '20': 'debug', '30': 'info', '40': 'warn', '50': 'error', '60': 'fatal' });

/**
 * The level of a sent value, and the sent text when it said more than the level (`warning`, `3`,
 * `CRITICAL`; not a mere case difference), to keep as the attribute `severity_text`. A value that
 * is no known level is kept lower-cased, as sent.
 */
export function canonicalLevel(sent: string): { level: string; original?: string } {
  const text = sent.trim();
  const lower = text.toLowerCase();
  // OTel severity texts carry a number: WARN2, ERROR3, INFO4.
  const known =
    NAMES[lower] ?? NAMES[lower.replace(/[1-4]$/, '')] ?? (/^[0-7]$/.test(lower) ? SYSLOG_NUMBERS[Number(lower)] : PINO_NUMBERS[lower]);
  if (known === undefined) return { level: lower };
  return known === lower ? { level: known } : { level: known, original: text };
}
