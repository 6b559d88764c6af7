import Joi from 'joi';
import { setting } from './setting';

/** The probes: each component check's deadline, and the event-loop delay past which the process is not live. */
export const healthSettings = {
  health: {
    checkTimeoutMs: setting('HEALTH_CHECK_TIMEOUT_MS', Joi.number().integer().min(100).max(30_000).default(2000)),
    maxEventLoopDelayMs: setting('LIVE_MAX_EVENT_LOOP_DELAY_MS', Joi.number().integer().min(100).max(60_000).default(3000)),
  },
};
