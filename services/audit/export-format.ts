import type { ExportFormat } from '../../db/queries/audit/audit-export.queries';
import { Transform } from 'node:stream';
import type { ChainedRecord } from './chain';

/** The file formats of an export. */
export { EXPORT_FORMATS, type ExportFormat } from '../../db/queries/audit/audit-export.queries';

/**
 * The files of GET /audit/export, written the same way by the gateway (hot exports, streamed to the
 * response) and by the cold-export workflow (written to the object store). Records arrive one at a
 * time and leave as text, so an export of millions of records holds one record at a time.
 *
 * Each record carries its place in the chain (seq, prevHash, hash): a customer can check an export
 * with the same rule as `npm run audit:verify`, except for records whose personal fields an
 * anonymization has masked, which no longer match their hash by design.
 */

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
};

/** The columns of an export, in file order (docs/reference/audit.md#rule-16): the record, then its chain link. */
export const EXPORT_COLUMNS = [
  'id', 'timestamp', 'tenantId', 'action', 'entityType', 'entityId', 'actorId', 'actorIp', 'actorUserAgent',
  'impersonatorId', 'traceId', 'before', 'after', 'meta', 'seq', 'prevHash', 'hash',
] as const satisfies readonly (keyof ChainedRecord)[];

/** A record with its members in EXPORT_COLUMNS order, so every file lists them the same way. */
export function exportRecord(record: ChainedRecord): Record<string, unknown> {
  return Object.fromEntries(EXPORT_COLUMNS.map((column) => [column, record[column]]));
}

/**
 * Spreadsheets run a cell that starts with one of these as a formula (CSV injection, OWASP): a
 * record's text comes from whoever caused it, so such a cell gets a leading apostrophe, which
 * spreadsheets show as text and hide. Tab and carriage return are on OWASP's list as well.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV cell (RFC 4180): objects as JSON, null as empty, quoted when it holds a quote, comma or line break. */
export function csvCell(value: string | number | boolean | object | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const CSV_HEADER = `${EXPORT_COLUMNS.join(',')}\r\n`;

function csvLine(record: ChainedRecord): string {
  return `${EXPORT_COLUMNS.map((column) => csvCell(record[column])).join(',')}\r\n`;
}

/**
 * Turns a stream of records into the export file's text. JSON is one array with a record per line
 * (a whole JSON document, as `format=json` promises, yet readable line by line); CSV has a header
 * line and CRLF line ends (RFC 4180). An empty export is `[]` or the header alone.
 */
export function createExportEncoder(format: ExportFormat): Transform {
  let count = 0;
  return new Transform({
    writableObjectMode: true,
    transform(record: ChainedRecord, _encoding, done) {
      if (format === 'csv') {
        done(null, count++ === 0 ? CSV_HEADER + csvLine(record) : csvLine(record));
      } else {
        done(null, `${count++ === 0 ? '[\n' : ',\n'}${JSON.stringify(exportRecord(record))}`);
      }
    },
    flush(done) {
      if (format === 'csv') done(null, count === 0 ? CSV_HEADER : '');
      else done(null, count === 0 ? '[]\n' : '\n]\n');
    },
  });
}
