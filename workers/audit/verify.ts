import { checkLink, GENESIS_HASH, type ChainBreak } from '../../common/audit/chain';
import type { DatabasePool } from '../../db/pool';
import { selectChainHead, selectChainPage } from '../../db/queries/audit/audit-records.queries';
import { withTenant } from '../../db/tenant';

export type HeadBreak = { kind: 'head-mismatch'; headSeq: number; lastSeq: number };

export type VerifyResult =
  | { ok: true; tenantId: string; records: number }
  /** `records`: how many records were found sound before the break. */
  | { ok: false; tenantId: string; records: number; broken: ChainBreak | HeadBreak };

/**
 * Walks a tenant's chain in seq order and stops at the first broken link. Pages are read by keyset
 * (seq > last) in short transactions, so memory stays constant and no snapshot is held for the
 * whole walk. The walk ends at the head read first: records appended meanwhile are not judged, and
 * a chain that stops short of its head (its last records removed) is a break too.
 *
 * It runs as platform_app inside the tenant's scope: reading is all it needs.
 */
export async function verifyTenantChain(pool: DatabasePool, tenantId: string, pageSize = 1000): Promise<VerifyResult> {
  const head = await withTenant(pool, tenantId, (tx) => selectChainHead(tx, tenantId));
  const headSeq = head?.lastSeq ?? 0;
  let previous = { seq: 0, hash: GENESIS_HASH };
  for (;;) {
    const page = await withTenant(pool, tenantId, (tx) => selectChainPage(tx, tenantId, previous.seq, headSeq, pageSize));
    for (const record of page) {
      const broken = checkLink(previous, record);
      if (broken) return { ok: false, tenantId, records: previous.seq, broken };
      previous = { seq: record.seq, hash: record.hash };
    }
    if (page.length < pageSize) break;
  }
  if (previous.seq !== headSeq || (head && previous.hash !== head.lastHash)) {
    return { ok: false, tenantId, records: previous.seq, broken: { kind: 'head-mismatch', headSeq, lastSeq: previous.seq } };
  }
  return { ok: true, tenantId, records: previous.seq };
}

const explanations: Record<(ChainBreak | HeadBreak)['kind'], string> = {
  'seq-gap': 'a record is missing or was inserted out of sequence',
  'prev-hash-mismatch': 'the record does not follow its predecessor (replaced or reordered)',
  'hash-mismatch': 'the record was changed after it was stored',
  'head-mismatch': 'the chain ends before its recorded head (records removed at the end)',
};

/** One line for people: OK with the count, or where and how the chain breaks. */
export function describeVerification(result: VerifyResult): string {
  if (result.ok) return `audit chain of tenant ${result.tenantId}: OK, ${result.records} record(s) verified`;
  const { broken } = result;
  const where = broken.kind === 'head-mismatch'
    ? `after seq ${broken.lastSeq} (head says ${broken.headSeq})`
    : broken.kind === 'seq-gap'
      ? `at record ${broken.id}: expected seq ${broken.expectedSeq}, found ${broken.foundSeq}`
      : `at seq ${broken.seq} (record ${broken.id})`;
  return `audit chain of tenant ${result.tenantId}: BROKEN ${where}: ${explanations[broken.kind]}; ${result.records} record(s) sound before it`;
}
