import { once } from 'node:events';
import { PassThrough, type Writable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { stringify } from 'csv-stringify';
import type { LogsAuditTable } from '../../db/schema.js';
import type { AuditFilter, LogsAuditRepository } from './audit.repository.js';

export const EXPORT_COLUMNS = [
  'at',
  'actor',
  'actor_id',
  'action',
  'outcome',
  'target_type',
  'target_id',
  'ip',
  'user_agent',
  'request_id',
  'details',
  'tenant_id',
] as const;

function cells(row: LogsAuditTable): string[] {
  return EXPORT_COLUMNS.map((column) => row[column] ?? '');
}

/**
 * Waits while the consumer is behind, so a slow download holds at most about one page in memory.
 * False once the stream is destroyed (the client left: Fastify destroys the payload): stop producing,
 * rather than reading and encoding the rest of the trail for nobody.
 */
export async function roomFor(stream: Writable): Promise<boolean> {
  if (stream.destroyed) return false;
  if (!stream.writableNeedDrain) return true;
  const waiting = new AbortController();
  try {
    await Promise.race([once(stream, 'drain', { signal: waiting.signal }), once(stream, 'close', { signal: waiting.signal })]);
  } finally {
    waiting.abort();
  }
  return !stream.destroyed;
}

/**
 * CSV of the matching audit rows, streamed page by page from the database. Cells beginning with
 * = + - @ (or tab / carriage return) are prefixed with a quote so spreadsheets never run them as
 * formulas (csv-stringify `escape_formulas`).
 */
export function auditCsv(audit: LogsAuditRepository, filter: AuditFilter): NodeJS.ReadableStream {
  const csv = stringify({ header: true, columns: [...EXPORT_COLUMNS], escape_formulas: true, bom: true });
  void (async () => {
    try {
      for await (const page of audit.stream(filter)) {
        for (const row of page) if (!csv.write(cells(row)) && !(await roomFor(csv))) return;
        if (csv.destroyed) return;
      }
      csv.end();
    } catch (error) {
      csv.destroy(error as Error);
    }
  })();
  return csv;
}

/**
 * A real XLSX (exceljs streaming writer: rows are committed and flushed as they are written).
 * exceljs is loaded by the first export: it and its zip libraries are a third of the service's
 * start-up CPU, for a route an auditor calls now and then.
 */
export function auditXlsx(audit: LogsAuditRepository, filter: AuditFilter): NodeJS.ReadableStream {
  const out = new PassThrough();
  void (async () => {
    try {
      const { default: ExcelJS } = await import('exceljs');
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
      workbook.creator = 'Gerbang';
      const sheet = workbook.addWorksheet('Audit');
      sheet.addRow([...EXPORT_COLUMNS]).commit();
      for await (const page of audit.stream(filter)) {
        for (const row of page) sheet.addRow(cells(row)).commit();
        // SQLite pages arrive without a turn of the event loop (better-sqlite3 is synchronous), and
        // exceljs buffers before `out` sees back-pressure: yield a turn per page, so compression
        // drains into `out` and a client that left is noticed within a page.
        await setImmediate();
        if (!(await roomFor(out))) return;
      }
      sheet.commit();
      await workbook.commit();
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return out;
}
