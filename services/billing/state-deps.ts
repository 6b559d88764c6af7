import type { Config } from '../../common/config';
import type { DatabasePool } from '../../db/pool';
import type { TemporalHandle } from '../../common/temporal/client';

/** What reads and recovers a tenant's billing state: the usage, usage-history and termination routes (built by the gateway runtime). */
export interface BillingStateDeps {
  config: Readonly<Config>;
  /** The application pool: every tenant-owned statement runs under withTenant. */
  db: DatabasePool;
  /** The read-only reporting pool, for usage history. */
  analyticsDb: DatabasePool;
  /** Undefined until the start-up connection to Temporal succeeds. */
  temporal(): TemporalHandle | undefined;
}
