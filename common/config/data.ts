import Joi from 'joi';
import { setting } from './setting';

/**
 * The data layer (docs/reference/data.md#limits): the largest record a body may carry, the largest
 * value of one jsonb field, how many tables one module may declare, and the budget of one read.
 */
export const dataSettings = {
  data: {
    maxRecordSizeBytes: setting('DATA_MAX_RECORD_SIZE_BYTES', Joi.number().integer().min(1024).default(1_048_576)),
    maxJsonbSizeBytes: setting('DATA_MAX_JSONB_SIZE_BYTES', Joi.number().integer().min(1).default(262_144)),
    maxTablesPerModule: setting('DATA_MAX_TABLES_PER_MODULE', Joi.number().integer().min(1).default(50)),
    /**
     * statement_timeout of a record read (SET LOCAL); the gateway uses the lower of this and
     * GRPC_CALL_TIMEOUT_MS, so a read never runs past the deadline of its request (default 5 s).
     */
    statementTimeoutMs: setting('DATA_STATEMENT_TIMEOUT_MS', Joi.number().integer().min(1).max(60_000).default(4000)),
  },
};
