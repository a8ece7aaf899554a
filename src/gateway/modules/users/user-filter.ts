import { AppError } from '../../../shared/errors/app-error.js';

/** Columns a list may be filtered and sorted on (spec 4.2). Anything else is a 400. */
export const USER_LIST_COLUMNS = ['id', 'no_pegawai', 'nama', 'email', 'tipe_pegawai', 'hak_akses_id', 'created_at', 'updated_at'] as const;
export type UserListColumn = (typeof USER_LIST_COLUMNS)[number];

export const FILTER_OPERATORS = ['=', 'like', 'ilike', '>', '<', '>=', '<=', '<>', 'in'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface FilterCondition {
  readonly column: UserListColumn;
  readonly operator: FilterOperator;
  /** One value, or several for `in`. */
  readonly values: readonly string[];
}

export interface SortKey {
  readonly column: UserListColumn;
  readonly direction: 'asc' | 'desc';
}

const MAX_CONDITIONS = 20;
const MAX_IN_VALUES = 100;

function isColumn(name: string): name is UserListColumn {
  return (USER_LIST_COLUMNS as readonly string[]).includes(name);
}

/**
 * Parses `column,operator,value` conditions joined by `;` (spec 4.2). The value is everything after
 * the second comma, so it may contain commas; `in` takes values separated by `|`.
 */
export function parseFilter(text: string | undefined): FilterCondition[] {
  if (text === undefined || text.trim() === '') return [];
  const parts = text.split(';').filter((part) => part.trim() !== '');
  if (parts.length > MAX_CONDITIONS) throw new AppError('FILTER_INVALID', { params: { detail: `at most ${MAX_CONDITIONS} conditions` } });
  return parts.map((part) => {
    const first = part.indexOf(',');
    const second = first < 0 ? -1 : part.indexOf(',', first + 1);
    if (second < 0) throw new AppError('FILTER_INVALID', { params: { detail: 'expected column,operator,value' } });
    const column = part.slice(0, first).trim();
    const operator = part
      .slice(first + 1, second)
      .trim()
      .toLowerCase();
    const value = part.slice(second + 1);
    if (!isColumn(column))
      throw new AppError('FILTER_INVALID', { params: { detail: `unknown column; allowed: ${USER_LIST_COLUMNS.join(', ')}` } });
    if (!(FILTER_OPERATORS as readonly string[]).includes(operator)) {
      throw new AppError('FILTER_INVALID', { params: { detail: `unknown operator; allowed: ${FILTER_OPERATORS.join(' ')}` } });
    }
    const values = operator === 'in' ? value.split('|') : [value];
    if (values.length > MAX_IN_VALUES)
      throw new AppError('FILTER_INVALID', { params: { detail: `at most ${MAX_IN_VALUES} values for in` } });
    return { column, operator: operator as FilterOperator, values };
  });
}

/** Parses `sort=column[,asc|desc]` joined by `;`; default newest first. */
export function parseSort(text: string | undefined): SortKey[] {
  if (text === undefined || text.trim() === '') return [{ column: 'created_at', direction: 'desc' }];
  return text
    .split(';')
    .filter((part) => part.trim() !== '')
    .slice(0, 5)
    .map((part) => {
      const [column = '', direction = 'asc', ...rest] = part.split(',').map((item) => item.trim());
      if (!isColumn(column))
        throw new AppError('SORT_INVALID', { params: { detail: `unknown column; allowed: ${USER_LIST_COLUMNS.join(', ')}` } });
      const dir = direction.toLowerCase();
      if ((dir !== 'asc' && dir !== 'desc') || rest.length > 0)
        throw new AppError('SORT_INVALID', { params: { detail: 'direction must be asc or desc' } });
      return { column, direction: dir };
    });
}
