import Joi from 'joi';
import { setting } from './setting';

/** Route calls: the retry delay of idempotent GETs and the per-tenant breaker (docs/reference/gateway.md, rules 13 and 15). */
export const resilienceSettings = {
  resilience: {
    getRetryDelayMs: setting('GET_RETRY_DELAY_MS', Joi.number().integer().min(0).default(100)),
    tenantBreaker: {
      errorRate: setting('TENANT_BREAKER_ERROR_RATE', Joi.number().min(0).max(1).default(0.5)),
      windowMs: setting('TENANT_BREAKER_WINDOW_MS', Joi.number().integer().min(1000).default(60_000)),
      minRequests: setting('TENANT_BREAKER_MIN_REQUESTS', Joi.number().integer().min(1).default(20)),
      openMs: setting('TENANT_BREAKER_OPEN_MS', Joi.number().integer().min(1000).default(30_000)),
    },
  },
};
