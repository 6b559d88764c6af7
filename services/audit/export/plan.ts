import { problems } from '../../../common/problems';
import type { ExportFormat } from '../../../db/queries/audit/audit-export.queries';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface ExportRequestRange {
  since: Date;
  until: Date;
}

/**
 * Hot or cold (docs/reference/audit.md#rule-16): a range that reaches back further than hotDays from now needs
 * records that may already be in cold storage, so it becomes a cold-export job (202); otherwise the
 * file is streamed at once, for at most hotDays of range (400 export-range-too-large beyond, which
 * only a range reaching into the future can hit).
 */
export function planExport(range: ExportRequestRange, now: Date, hotDays: number): 'hot' | 'cold' {
  if (range.since.getTime() < now.getTime() - hotDays * DAY_MS) return 'cold';
  if (range.until.getTime() - range.since.getTime() > hotDays * DAY_MS) throw problems.exportRangeTooLarge(hotDays);
  return 'hot';
}

/** `2025-01-01T00:00:00.000Z` → `20250101T000000Z`: no characters a file system refuses. */
function compactInstant(instant: Date): string {
  return instant.toISOString().replace(/\.\d{3}Z$/, 'Z').replaceAll(/[-:]/g, '');
}

/** The attachment's name, derived from the range: `audit-20250101T000000Z-20250201T000000Z.csv`. */
export function exportFileName(range: ExportRequestRange, format: ExportFormat): string {
  return `audit-${compactInstant(range.since)}-${compactInstant(range.until)}.${format}`;
}
