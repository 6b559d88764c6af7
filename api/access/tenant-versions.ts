import type { CommonQueryMethods } from 'slonik';
import { selectRbacVersions } from '../../db/queries/access/roles.queries';

interface Waiter {
  resolve(version: number): void;
  reject(error: unknown): void;
}

/**
 * Reads tenants' RBAC versions (migration 0010) for the permission cache's per-request check. Reads
 * asked for in the same tick share one query (`rbac_versions_of` over every tenant waiting), so a
 * burst of requests costs one round trip. This never serves a request an older answer: a query is
 * sent only after every request it answers had arrived, so it sees every change committed before
 * any of them (a read already in flight is never joined).
 */
export class TenantVersionReader {
  private waiting: Map<string, Waiter[]> | null = null;

  constructor(private readonly db: CommonQueryMethods) {}

  read(tenantId: string): Promise<number> {
    return new Promise((resolve, reject) => {
      if (!this.waiting) {
        this.waiting = new Map();
        setImmediate(() => void this.flush());
      }
      const waiters = this.waiting.get(tenantId) ?? [];
      waiters.push({ resolve, reject });
      this.waiting.set(tenantId, waiters);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting!;
    this.waiting = null;
    try {
      const versions = await selectRbacVersions(this.db, [...batch.keys()]);
      for (const [tenantId, waiters] of batch) waiters.forEach((waiter) => waiter.resolve(versions.get(tenantId) ?? 0));
    } catch (error) {
      for (const waiters of batch.values()) waiters.forEach((waiter) => waiter.reject(error));
    }
  }
}
