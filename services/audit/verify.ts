import { canonicalJson } from '../../common/canonical-json';
import { addToRuns, checkLink, GENESIS_HASH, type ChainBreak, type ChainLink } from './chain';
import type { ChainRun } from '../../db/queries/audit/audit-retention.queries';
import { readArchivedRecords, type ReadDigest } from './cold-archive';
import type { ObjectStore } from '../../common/object-store';
import type { DatabasePool } from '../../db/pool';
import {
  selectArchivedChain, selectChainHead, selectChainPage, type ArchivedChainObject,
} from '../../db/queries/audit/audit-records.queries';
import { withTenant } from '../../db/tenant';

export type HeadBreak = { kind: 'head-mismatch'; headSeq: number; lastSeq: number };

/**
 * Breaks found at the archive: an archived run that does not continue the chain where it should
 * (its first record's prevHash is not its predecessor's hash), or an archive object whose content
 * is not what the catalogue recorded (read with `checkArchives`).
 */
export type ArchiveBreak =
  | { kind: 'archive-link-mismatch'; seq: number; objectKey: string }
  | { kind: 'archive-object-mismatch'; objectKey: string; reason: string };

export type VerifyResult =
  /**
   * `records`: every record from seq 1 to the head; `archived`: how many of them are in the cold
   * archive (linked through the catalogue's runs); `archivesRead`: archive objects read and checked.
   */
  | { ok: true; tenantId: string; records: number; archived: number; archivesRead: number }
  /** `records`: how many records were found sound before the break. */
  | { ok: false; tenantId: string; records: number; broken: ChainBreak | HeadBreak | ArchiveBreak };

export interface VerifyOptions {
  /** Hot records read per query. */
  pageSize?: number;
  /** Where the archive objects are: needed to read them (checkArchives, or objects archived before migration 0017). */
  objectStore?: ObjectStore;
  /** Read every live archive object too and check its records, bytes and runs against the catalogue. */
  checkArchives?: boolean;
}

interface ArchivedRun extends ChainRun {
  objectKey: string;
}

const explanations: Record<(ChainBreak | HeadBreak | ArchiveBreak)['kind'], string> = {
  'seq-gap': 'a record is missing or was inserted out of sequence',
  'prev-hash-mismatch': 'the record does not follow its predecessor (replaced or reordered)',
  'hash-mismatch': 'the record was changed after it was stored',
  'head-mismatch': 'the chain ends before its recorded head (records removed at the end)',
  'archive-link-mismatch': 'the archived records do not follow their predecessor (hot or archived records replaced)',
  'archive-object-mismatch': 'the archive object is not what was archived',
};

/**
 * Reads one archive object and checks it: every record links to the one before it within a run of
 * consecutive seqs (and its own hash is right at a run's start), seqs ascend, the records are the
 * tenant's, and count, bytes, SHA-256 and runs are what the catalogue recorded. Its runs, or why not.
 */
async function checkArchiveObject(store: ObjectStore, tenantId: string, object: ArchivedChainObject): Promise<ChainRun[] | ArchiveBreak> {
  const mismatch = (reason: string): ArchiveBreak => ({ kind: 'archive-object-mismatch', objectKey: object.objectKey, reason });
  const runs: ChainRun[] = [];
  let previous: ChainLink | null = null;
  let records = 0;
  let digest: ReadDigest | undefined;
  for await (const record of readArchivedRecords(store, object.objectKey, (read) => { digest = read; })) {
    records += 1;
    if (record.tenantId !== tenantId) return mismatch(`record ${record.id} is another tenant's`);
    if (previous && record.seq <= previous.seq) return mismatch(`record ${record.id} (seq ${record.seq}) is out of seq order`);
    // Within a run the predecessor is the record before; a run's first record is checked against its own prevHash.
    const predecessor = previous && record.seq === previous.seq + 1 ? previous : { seq: record.seq - 1, hash: record.prevHash };
    const broken = checkLink(predecessor, record);
    if (broken) return mismatch(`at seq ${record.seq} (record ${record.id}): ${explanations[broken.kind]}`);
    addToRuns(runs, record);
    previous = record;
  }
  if (records !== object.records) return mismatch(`holds ${records} records, the catalogue says ${object.records}`);
  if (digest?.sha256 !== object.sha256 || digest.bytes !== object.bytes) return mismatch('its bytes differ from those archived (SHA-256)');
  if (object.chainRuns && canonicalJson(object.chainRuns) !== canonicalJson(runs)) {
    return mismatch('its records do not form the chain runs the catalogue recorded');
  }
  return runs;
}

/**
 * The archived stretches of a tenant's chain, by the seq they start at. Loaded again when the hot
 * walk meets a gap nothing covers yet: retention may have dropped a partition since the last load.
 * Objects already read are not read again.
 */
class ArchivedChain {
  private runs = new Map<number, ArchivedRun>();
  private readonly known = new Map<string, ChainRun[]>();
  archivesRead = 0;

  constructor(private readonly pool: DatabasePool, private readonly tenantId: string, private readonly options: VerifyOptions) {}

  async load(): Promise<ArchiveBreak | null> {
    const objects = await withTenant(this.pool, this.tenantId, (tx) => selectArchivedChain(tx, this.tenantId));
    for (const object of objects) {
      if (this.known.has(object.objectKey)) continue;
      let runs = object.chainRuns;
      if (object.state === 'live' && (this.options.checkArchives || runs === null)) {
        if (!this.options.objectStore) throw new Error(`archive object ${object.objectKey} must be read, but no object store was given`);
        const checked = await checkArchiveObject(this.options.objectStore, this.tenantId, object);
        if (!Array.isArray(checked)) return checked;
        this.archivesRead += 1;
        runs = checked;
      }
      // A deleted object archived before its runs were recorded leaves a gap the walk reports.
      this.known.set(object.objectKey, runs ?? []);
    }
    this.runs = new Map([...this.known].flatMap(([objectKey, runs]) => runs.map((run) => [run.firstSeq, { ...run, objectKey }] as const)));
    return null;
  }

  startingAt(seq: number): ArchivedRun | undefined {
    return this.runs.get(seq);
  }
}

/**
 * Walks a tenant's chain in seq order and stops at the first broken link. Hot pages are read by
 * keyset (seq > last) in short transactions, so memory stays constant and no snapshot is held for
 * the whole walk. Where the hot chain has a gap, the archived run starting there must continue it
 * (its prevHash is the hash before the gap) and the walk goes on from the run's last hash: records
 * moved to cold storage are linked in by the hashes the archive recorded, and with `checkArchives`
 * the objects themselves are read and checked. The walk ends at the head read first: records
 * appended meanwhile are not judged, and a chain that stops short of its head is a break too.
 *
 * It runs as platform_app inside the tenant's scope: reading is all it needs.
 */
export async function verifyTenantChain(pool: DatabasePool, tenantId: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const pageSize = options.pageSize ?? 1000;
  const head = await withTenant(pool, tenantId, (tx) => selectChainHead(tx, tenantId));
  const headSeq = head?.lastSeq ?? 0;
  const archive = new ArchivedChain(pool, tenantId, options);
  let previous = { seq: 0, hash: GENESIS_HASH };
  let archived = 0;
  const failed = (broken: ChainBreak | HeadBreak | ArchiveBreak): VerifyResult => ({ ok: false, tenantId, records: previous.seq, broken });

  /** Steps over the archived runs that continue the chain, up to `seq` at most; a break if one does not link. */
  const stepOverArchived = async (seq: number): Promise<ArchiveBreak | null> => {
    let reloaded = false;
    while (previous.seq < seq) {
      const run = archive.startingAt(previous.seq + 1);
      if (!run) {
        if (reloaded) return null;
        reloaded = true;
        const broken = await archive.load();
        if (broken) return broken;
        continue;
      }
      if (run.prevHash !== previous.hash) return { kind: 'archive-link-mismatch', seq: run.firstSeq, objectKey: run.objectKey };
      archived += run.lastSeq - run.firstSeq + 1;
      previous = { seq: run.lastSeq, hash: run.lastHash };
    }
    return null;
  };

  const loaded = await archive.load();
  if (loaded) return failed(loaded);
  for (;;) {
    const page = await withTenant(pool, tenantId, (tx) => selectChainPage(tx, tenantId, previous.seq, headSeq, pageSize));
    for (const record of page) {
      if (record.seq !== previous.seq + 1) {
        const broken = await stepOverArchived(record.seq - 1);
        if (broken) return failed(broken);
      }
      const broken = checkLink(previous, record);
      if (broken) return failed(broken);
      previous = { seq: record.seq, hash: record.hash };
    }
    if (page.length < pageSize) break;
  }
  const broken = await stepOverArchived(headSeq);
  if (broken) return failed(broken);
  if (previous.seq !== headSeq || (head && previous.hash !== head.lastHash)) {
    return failed({ kind: 'head-mismatch', headSeq, lastSeq: previous.seq });
  }
  return { ok: true, tenantId, records: previous.seq, archived, archivesRead: archive.archivesRead };
}

/** One line for people: OK with the count, or where and how the chain breaks. */
export function describeVerification(result: VerifyResult): string {
  if (result.ok) {
    const cold = result.archived === 0 ? ''
      : result.archivesRead > 0
        ? ` (${result.archived} of them archived; ${result.archivesRead} archive object(s) read and checked)`
        : ` (${result.archived} of them archived, linked by the hashes the archive recorded; --archives reads and checks them)`;
    return `audit chain of tenant ${result.tenantId}: OK, ${result.records} record(s) verified${cold}`;
  }
  const { broken } = result;
  const where = broken.kind === 'head-mismatch'
    ? `after seq ${broken.lastSeq} (head says ${broken.headSeq})`
    : broken.kind === 'seq-gap'
      ? `at record ${broken.id}: expected seq ${broken.expectedSeq}, found ${broken.foundSeq}`
      : broken.kind === 'archive-object-mismatch'
        ? `in archive object ${broken.objectKey}: ${broken.reason}`
        : broken.kind === 'archive-link-mismatch'
          ? `at seq ${broken.seq} (archive object ${broken.objectKey})`
          : `at seq ${broken.seq} (record ${broken.id})`;
  return `audit chain of tenant ${result.tenantId}: BROKEN ${where}: ${explanations[broken.kind]}; ${result.records} record(s) sound before it`;
}
