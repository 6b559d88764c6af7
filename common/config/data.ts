import Joi from 'joi';
import { setting } from './setting';

/**
 * The data layer (document 2, Limits / Data layer): the largest record a body may carry, the largest
 * value of one jsonb field, and how many tables one module may declare.
 */
export const dataSettings = {
  data: {
    maxRecordSizeBytes: setting('DATA_MAX_RECORD_SIZE_BYTES', Joi.number().integer().min(1024).default(1_048_576)),
    maxJsonbSizeBytes: setting('DATA_MAX_JSONB_SIZE_BYTES', Joi.number().integer().min(1).default(262_144)),
    maxTablesPerModule: setting('DATA_MAX_TABLES_PER_MODULE', Joi.number().integer().min(1).default(50)),
  },
};
