import { homedir } from 'node:os';
import { join } from 'node:path';
import Joi from 'joi';
import { setting } from './setting';

/** The process itself: where it runs, how much it logs, the version it reports. */
export type Environment = 'development' | 'test' | 'staging' | 'production';

export const nodeEnv = setting('NODE_ENV', Joi.string<Environment>().valid('development', 'test', 'staging', 'production').default('development'));

/** State kept outside the work tree (the bring-up scripts use the same folder); key files default into it. */
export const platformData = setting('PLATFORM_DATA', Joi.string().default(join(homedir(), '.cache/platform/data')));

export const runtimeSettings = {
  env: nodeEnv,
  /** $PLATFORM_DATA: the default home of the generated key files, and of the local CA (scripts/infra/tls.sh). */
  dataDir: platformData,
  logLevel: setting('LOG_LEVEL', Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info')),
  version: setting('SERVICE_VERSION', Joi.string().default('0.1.0')),
};
