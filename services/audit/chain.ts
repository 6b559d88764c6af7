import { createHash } from 'node:crypto';
import { canonicalJson } from '../../common/canonical-json';
import type { ChainRun } from '../../db/queries/audit/audit-retention.queries';
import type { AuditRecord } from './record';

/**
 * The tamper evidence of the audit store. Each tenant's records form a chain: record n carries
 * the hash of record n-1 (`prevHash`; 32 zero bytes for the first) and its own `hash`, the SHA-256
 * of the canonical serialization of its fields together with prevHash. Changing, removing or
 * reordering any stored record breaks the chain at that point, which `npm run audit:verify` finds.
 */

/** The prevHash of a tenant's first record (hex, like every hash here). */
export const GENESIS_HASH = '0'.repeat(64);

/** Part of the hashed text, so a later change of the hashed form can never be mistaken for this one. */
const CHAIN_FORMAT = 1;

export interface ChainLink {
  seq: number;
  prevHash: string;
  hash: string;
}

export type ChainedRecord = AuditRecord & ChainLink;

/** The hashed form of a record: every stored field that says what happened, with its place in the chain. */
export function chainText(record: AuditRecord, seq: number, prevHash: string): string {
  return canonicalJson({
    format: CHAIN_FORMAT,
    id: record.id,
    tenantId: record.tenantId,
    seq,
    prevHash,
    action: record.action,
    entityType: record.entityType,
    entityId: record.entityId,
    actorId: record.actorId,
    actorIp: record.actorIp,
    actorUserAgent: record.actorUserAgent,
    impersonatorId: record.impersonatorId,
    before: record.before,
    after: record.after,
    meta: record.meta,
    traceId: record.traceId,
    timestamp: record.timestamp,
  });
}

export function chainHash(record: AuditRecord, seq: number, prevHash: string): string {
  return createHash('sha256').update(chainText(record, seq, prevHash), 'utf8').digest('hex');
}

/** Appends records to a chain whose last link is `head`, in the order given. */
export function extendChain(head: { seq: number; hash: string }, records: readonly AuditRecord[]): ChainedRecord[] {
  let { seq, hash } = head;
  return records.map((record) => {
    const prevHash = hash;
    seq += 1;
    hash = chainHash(record, seq, prevHash);
    return { ...record, seq, prevHash, hash };
  });
}

export type ChainBreak =
  | { kind: 'seq-gap'; expectedSeq: number; foundSeq: number; id: string }
  | { kind: 'prev-hash-mismatch'; seq: number; id: string }
  | { kind: 'hash-mismatch'; seq: number; id: string };

/**
 * Checks one stored record against its predecessor's link; null when it follows correctly.
 * The seq check finds removed (or inserted) records, the prevHash check a record replaced as a whole
 * with a consistent hash, the hash check any changed field.
 */
export function checkLink(previous: { seq: number; hash: string }, stored: ChainedRecord): ChainBreak | null {
  if (stored.seq !== previous.seq + 1) return { kind: 'seq-gap', expectedSeq: previous.seq + 1, foundSeq: stored.seq, id: stored.id };
  if (stored.prevHash !== previous.hash) return { kind: 'prev-hash-mismatch', seq: stored.seq, id: stored.id };
  if (chainHash(stored, stored.seq, stored.prevHash) !== stored.hash) return { kind: 'hash-mismatch', seq: stored.seq, id: stored.id };
  return null;
}

/** Adds a link (in seq order) to the runs it belongs to: it extends the last run or starts one. */
export function addToRuns(runs: ChainRun[], link: ChainLink): void {
  const last = runs.at(-1);
  if (last && link.seq === last.lastSeq + 1) {
    last.lastSeq = link.seq;
    last.lastHash = link.hash;
  } else {
    runs.push({ firstSeq: link.seq, lastSeq: link.seq, prevHash: link.prevHash, lastHash: link.hash });
  }
}
