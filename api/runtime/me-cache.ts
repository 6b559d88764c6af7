import type { ChannelSubscriber } from '../../db/pg-channel-listener';
import type { DatabasePool } from '../../db/pool';
import type { TenantVersionReader } from './tenant-versions';
import type { MeAnswers } from '../../services/identity/deps';
import { readMe, type MeAnswer } from '../../services/identity/user-view';

interface Kept {
  answer: MeAnswer;
  /** The tenant's RBAC version the answer's grants are at least as new as. */
  rbacVersion: number;
  loadedAt: number;
}

export interface MeCacheOptions {
  db: DatabasePool;
  versions: TenantVersionReader;
  /** How long an answer may be reused while nothing it depends on is announced (0: never). */
  ttlMs: number;
  /** The most accounts whose answers are kept; past it the account kept longest is dropped. */
  maxAccounts: number;
  now?: () => number;
}

/**
 * GET /auth/me's answers per account and tenant, kept only while the gateway hears PostgreSQL
 * announce every change they depend on: the tenant's RBAC version (migration 0020, read through
 * TenantVersionReader) for the roles and permissions, and the account's id (migration 0024,
 * channel account_changes) for every change of the account or of its memberships. An answer is
 * used while the tenant's version is not newer than the one it was read at and its account has not
 * been announced since, so a change shows once its announcement arrived. A change made through this
 * process shows on its very next request: its writer calls forget(account) after committing. This is
 * the permission cache's consistency (docs/decisions/access.md, RBAC versions). Outside listening nothing is
 * kept and every request reads, and the TTL bounds reuse regardless.
 *
 * A read is kept only if nothing was announced or forgotten while it ran (the generation did not
 * change): its snapshot may predate the change.
 */
export class MeCache implements ChannelSubscriber, MeAnswers {
  private readonly accounts = new Map<string, Map<string, Kept>>();
  private isListening = false;
  private generation = 0;
  private readonly now: () => number;
  readonly stats = { hits: 0, misses: 0, announcements: 0 };

  constructor(private readonly options: MeCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The answer for the account in the tenant; null when the account is no member of it. */
  async answer(tenantId: string, userId: string): Promise<MeAnswer | null> {
    if (this.isListening) {
      // The version first: reading it may wait for the database, and an announcement may drop the answer meanwhile.
      const version = await this.options.versions.read(tenantId);
      const kept = this.accounts.get(userId)?.get(tenantId);
      if (kept && kept.rbacVersion >= version && this.now() - kept.loadedAt < this.options.ttlMs) {
        this.stats.hits += 1;
        return kept.answer;
      }
    }
    this.stats.misses += 1;
    const generation = this.generation;
    const read = await readMe(this.options.db, tenantId, userId);
    if (!read) return null;
    const { answer, rbacVersion } = read;
    if (this.isListening && generation === this.generation) this.keep(userId, tenantId, { answer, rbacVersion, loadedAt: this.now() });
    return answer;
  }

  /** A change of the account committed in this process: its next request reads again. */
  forget(userId: string): void {
    this.accounts.delete(userId);
    this.generation += 1;
  }

  listening(): void {
    this.startOver(true);
  }

  lost(): void {
    this.startOver(false);
  }

  /** The id of an account that changed. */
  notified(userId: string): void {
    if (!this.isListening) return;
    this.stats.announcements += 1;
    this.forget(userId);
  }

  private startOver(listening: boolean): void {
    this.isListening = listening;
    this.accounts.clear();
    this.generation += 1;
  }

  private keep(userId: string, tenantId: string, kept: Kept): void {
    const tenants = this.accounts.get(userId);
    if (tenants) {
      tenants.set(tenantId, kept);
      return;
    }
    this.accounts.set(userId, new Map([[tenantId, kept]]));
    if (this.accounts.size > this.options.maxAccounts) this.accounts.delete(this.accounts.keys().next().value!);
  }
}
