/** How numbers, sizes, durations and times read in the console. */
import { formatTime } from './time-zone.js';

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : value.toLocaleString('en-US');
}

export function percent(ratio: number | null | undefined, digits = 1): string {
  return ratio === null || ratio === undefined ? '–' : `${(ratio * 100).toFixed(digits)}%`;
}

export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let size = Math.abs(value);
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${value < 0 ? '-' : ''}${size.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function millis(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  return `${value < 10 ? value.toFixed(2) : Math.round(value)} ms`;
}

/** An ISO time as shown: in the chosen zone, to the millisecond, the zone named (time-zone.ts). */
export function time(iso: string | null | undefined): string {
  return iso ? formatTime(iso) : '–';
}
