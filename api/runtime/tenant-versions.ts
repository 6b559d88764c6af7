import type { CommonQueryMethods } from 'slonik';
import { rbacVersionsOf } from '../../services/access/grants';
import type { ChannelSubscriber } from '../../db/pg-channel-listener';
import { TickBatch } from './tick-batch';

/**
 * Tenants' RBAC versions (migration 0010) for the permission cache's check on every request.
 *
 * While the gateway LISTENs on rbac_versions (PgChannelListener), the versions it has read or
 * heard are kept in memory and a request costs no I/O: the database announces every bump when the
 * bumping transaction commits, whoever made it. A tenant not known yet is read once. A change
 * made through this process is applied here as it commits (`forget`), without waiting for its
 * announcement. Outside listening (start-up, a dropped connection, until LISTEN is in effect
 * again) announcements may be lost, so nothing is kept: every request reads the version, and what
 * was known before the gap is dropped when it begins and when listening resumes.
 *
 * Reads asked for in the same tick share one query (`rbac_versions_of` over every tenant waiting,
 * TickBatch), so a burst costs one round trip. A read never serves an older answer: its query is
 * sent only after every request it answers had arrived (a read in flight is never joined), and its
 * result is kept only if nothing made what is known incomplete while it ran (the generation did not
 * change).
 */
export class TenantVersionReader implements ChannelSubscriber {
  private readonly batch = new TickBatch<string, number>((tenantIds) => this.readFromDatabase(tenantIds));
  private readonly known = new Map<string, number>();
  private isListening = false;
  /** Changes whenever what is known may be missing a change; a read begun before is not kept. */
  private generation = 0;
  readonly stats = { queries: 0, notifications: 0 };

  constructor(private readonly db: CommonQueryMethods, private readonly maxTenants = 100_000) {}

  read(tenantId: string): Promise<number> {
    const known = this.known.get(tenantId);
    return known !== undefined ? Promise.resolve(known) : this.batch.run(tenantId);
  }

  /** A change of the tenant's RBAC committed in this process: its next request reads the version. */
  forget(tenantId: string): void {
    this.known.delete(tenantId);
    this.generation += 1;
  }

  /** The version kept for a tenant, if any (tests wait for an announcement with it). */
  knownVersion(tenantId: string): number | undefined {
    return this.known.get(tenantId);
  }

  listening(): void {
    this.startOver(true);
  }

  lost(): void {
    this.startOver(false);
  }

  /** `<tenant id>:<version>`; a version only ever moves forward. */
  notified(payload: string): void {
    const separator = payload.lastIndexOf(':');
    const version = Number(payload.slice(separator + 1));
    if (!this.isListening || separator < 0 || !Number.isSafeInteger(version)) return;
    this.stats.notifications += 1;
    this.keep(payload.slice(0, separator), version);
  }

  private startOver(listening: boolean): void {
    this.isListening = listening;
    this.known.clear();
    this.generation += 1;
  }

  private keep(tenantId: string, version: number): void {
    const known = this.known.get(tenantId);
    if (known !== undefined && known >= version) return;
    this.known.set(tenantId, version);
    // Bounded: past the cap the tenant known longest is read again on its next request.
    if (known === undefined && this.known.size > this.maxTenants) this.known.delete(this.known.keys().next().value!);
  }

  private async readFromDatabase(tenantIds: readonly string[]): Promise<number[]> {
    const generation = this.generation;
    this.stats.queries += 1;
    const versions = await rbacVersionsOf(this.db, [...new Set(tenantIds)]);
    const keep = this.isListening && generation === this.generation;
    return tenantIds.map((tenantId) => {
      const version = versions.get(tenantId) ?? 0;
      if (keep) this.keep(tenantId, version);
      return version;
    });
  }
}
