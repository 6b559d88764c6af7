import Joi from 'joi';
import { setting } from './setting';

/**
 * The probes: each component check's deadline, and the event-loop delay past which the process is not
 * live. And the backlog gauges of the gateway's /metrics (api/metrics/backlog-metrics.ts): one reading
 * of the database serves every scrape for `cacheMs`, so several scrapers cost one query, and a reading
 * is cancelled by PostgreSQL after `timeoutMs`, which is also the longest a scrape waits for it.
 */
export const healthSettings = {
  health: {
    checkTimeoutMs: setting('HEALTH_CHECK_TIMEOUT_MS', Joi.number().integer().min(100).max(30_000).default(2000)),
    maxEventLoopDelayMs: setting('LIVE_MAX_EVENT_LOOP_DELAY_MS', Joi.number().integer().min(100).max(60_000).default(3000)),
  },
  backlogMetrics: {
    cacheMs: setting('METRICS_BACKLOG_CACHE_MS', Joi.number().integer().min(0).max(300_000).default(5000)),
    timeoutMs: setting('METRICS_BACKLOG_TIMEOUT_MS', Joi.number().integer().min(50).max(10_000).default(1000)),
  },
};
