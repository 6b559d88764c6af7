import type { AuditIntake } from './record-publisher';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';

/** What the audit routes work with; built once per gateway by createAuditServices. */
export interface AuditDeps {
  config: Readonly<Config>;
  /** The application pool: anonymizations (the lock, the masking row and its audit record). */
  db: DatabasePool;
  /** The read-only reporting pool: every query of records and the readers' wait for anonymizations. */
  analyticsDb: DatabasePool;
  /** The direct intake path (Kafka, with the PostgreSQL fallback buffer). */
  intake: AuditIntake;
  logger: Logger;
}
