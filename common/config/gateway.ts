import Joi from 'joi';
import { nodeEnv } from './runtime';
import { setting } from './setting';

/** The gateway: where it listens, what it accepts, and the limits of document 1 it enforces per caller. */
export const gatewaySettings = {
  api: {
    host: setting('API_HOST', Joi.string().hostname().default('127.0.0.1')),
    port: setting('API_PORT', Joi.number().port().default(8080)),
    grpcPort: setting('GRPC_PORT', Joi.number().port().default(50051)),
    problemBase: setting('PROBLEM_BASE', Joi.string().uri({ scheme: ['http', 'https'] }).default('https://problems.platform.local'),
      (base) => base.replace(/\/+$/, '')),
    downstreamTimeoutMs: setting('GRPC_CALL_TIMEOUT_MS', Joi.number().integer().min(100).max(60_000).default(5000)),
    /** auto: responses are validated everywhere but in production. */
    validateResponses: setting('RESPONSE_VALIDATION', Joi.string().valid('auto', 'on', 'off').default('auto'),
      (mode, lookup) => mode === 'on' || (mode === 'auto' && ['development', 'staging', 'test'].includes(lookup(nodeEnv)))),
    bodyLimitBytes: setting('API_BODY_LIMIT_BYTES', Joi.number().integer().min(1024).max(100 * 1024 * 1024).default(1024 * 1024)),
    shutdownTimeoutMs: setting('SHUTDOWN_TIMEOUT_MS', Joi.number().integer().min(0).max(120_000).default(10_000)),
    /** How many verified access tokens the gateway remembers (api/access/verified-tokens.ts). */
    verifiedTokenCacheSize: setting('API_VERIFIED_TOKEN_CACHE_SIZE', Joi.number().integer().min(1).default(10_000)),
  },
  featureFlags: { refreshMs: setting('FEATURE_FLAGS_REFRESH_MS', Joi.number().integer().min(100).max(3_600_000).default(30_000)) },
  /** Requests per window per group key (document 1, Limits); the admin roles get adminLimit. */
  rateLimit: {
    limit: setting('RATE_LIMIT_PER_MINUTE', Joi.number().integer().min(1).default(1000)),
    adminLimit: setting('RATE_LIMIT_ADMIN_PER_MINUTE', Joi.number().integer().min(1).default(5000)),
    windowMs: setting('RATE_LIMIT_WINDOW_MS', Joi.number().integer().min(1000).default(60_000)),
  },
};
