import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { ChainedRecord } from '../../../services/audit/chain';
import { createExportEncoder, csvCell, EXPORT_COLUMNS } from '../../../services/audit/export-format';
import type { ExportFormat } from '../../../db/queries/audit/audit-export.queries';
import { mergeBySeq } from '../../../services/audit/export/merge-by-seq';
import { exportFileName, planExport } from '../../../services/audit/export/plan';
import { Problem } from '../../../common/problems';

function record(seq: number, overrides: Partial<ChainedRecord> = {}): ChainedRecord {
  return {
    id: `00000000-0000-7000-8000-${String(seq).padStart(12, '0')}`, tenantId: '0190a000-0000-7000-8000-000000000001',
    action: 'user.profile.updated', entityType: 'user', entityId: 'u-1', actorId: 'a-1', actorIp: '127.0.0.1',
    actorUserAgent: 'jest', impersonatorId: null, before: null, after: { name: 'Ada' }, meta: null, traceId: null,
    timestamp: '2025-01-01T00:00:00.000Z', seq, prevHash: '0'.repeat(64), hash: 'f'.repeat(64), ...overrides,
  };
}

const encode = (format: ExportFormat, records: ChainedRecord[]) => text(Readable.from(records).pipe(createExportEncoder(format)));

describe('CSV cells (RFC 4180, formula injection)', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("http://evil")', '"\'=HYPERLINK(""http://evil"")"'],
    ['+1', "'+1"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
    [null, ''],
    [42, '42'],
    [{ a: '=1', b: 'x,y' }, '"{""a"":""=1"",""b"":""x,y""}"'],
  ])('%j → %s', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });
});

describe('export encoder', () => {
  it('writes a JSON array with the columns in order, and [] when empty', async () => {
    const output = await encode('json', [record(1), record(2, { meta: { note: 'x' } })]);
    const parsed = JSON.parse(output) as Record<string, unknown>[];
    expect(parsed.map((r) => r.seq)).toEqual([1, 2]);
    expect(Object.keys(parsed[0])).toEqual([...EXPORT_COLUMNS]);
    expect(parsed[1].meta).toEqual({ note: 'x' });
    expect(JSON.parse(await encode('json', []))).toEqual([]);
  });

  it('writes CSV with a header line and CRLF line ends, and the header alone when empty', async () => {
    const output = await encode('csv', [record(1, { entityId: '=cmd', after: null })]);
    const [header, line, rest] = output.split('\r\n');
    expect(header).toBe(EXPORT_COLUMNS.join(','));
    expect(line).toContain(",'=cmd,");
    expect(rest).toBe('');
    expect(await encode('csv', [])).toBe(`${EXPORT_COLUMNS.join(',')}\r\n`);
  });
});

describe('hot or cold', () => {
  const now = new Date('2025-06-01T00:00:00Z');
  const day = 24 * 60 * 60 * 1000;
  const at = (offsetDays: number) => new Date(now.getTime() + offsetDays * day);

  it('streams a range within the hot days', () => {
    expect(planExport({ since: at(-90), until: now }, now, 90)).toBe('hot');
  });

  it('sends a range reaching further back to cold storage, however long it is', () => {
    expect(planExport({ since: at(-91), until: at(-89) }, now, 90)).toBe('cold');
    expect(planExport({ since: at(-2000), until: now }, now, 90)).toBe('cold');
  });

  it('refuses a hot range over 90 days with export-range-too-large', () => {
    const refusal = (() => {
      try {
        return planExport({ since: at(-10), until: at(81) }, now, 90);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(Problem);
    expect((refusal as Problem).type).toBe('export-range-too-large');
  });

  it('names the file after the range', () => {
    expect(exportFileName({ since: new Date('2025-01-01T00:00:00Z'), until: new Date('2025-02-01T12:30:00.250Z') }, 'csv'))
      .toBe('audit-20250101T000000Z-20250201T123000Z.csv');
  });
});

describe('mergeBySeq', () => {
  async function* of(...seqs: number[]) {
    for (const seq of seqs) yield { seq };
  }

  it('merges sources sorted by seq into one sorted sequence', async () => {
    const merged: number[] = [];
    for await (const item of mergeBySeq([of(1, 4, 9), of(2, 3, 10), of(), of(5)])) merged.push(item.seq);
    expect(merged).toEqual([1, 2, 3, 4, 5, 9, 10]);
  });

  it('closes every source when the consumer stops early', async () => {
    const closed: string[] = [];
    async function* tracked(name: string, ...seqs: number[]) {
      try {
        for (const seq of seqs) yield { seq };
      } finally {
        closed.push(name);
      }
    }
    for await (const item of mergeBySeq([tracked('a', 1, 3), tracked('b', 2, 4)])) {
      if (item.seq === 2) break;
    }
    expect(closed.sort()).toEqual(['a', 'b']);
  });
});
