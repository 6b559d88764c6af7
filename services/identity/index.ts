import type { Redis } from 'ioredis';
import type { Config } from '../../common/config';
import { loadSigningKeys } from './signing-keys';
import { TokenService } from './tokens';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import { Mailer } from '../notify/mailer';
import { SubscriptionWorkflows } from '../billing/subscription-workflows';
import type { TemporalHandle } from '../../common/temporal/client';
import type { IdentityDeps, MeAnswers } from './deps';
import { LoginThrottle } from './login-throttle';
import { VerifyEmailLimit } from './verify-email-limit';

/**
 * Loads the signing keys (generating the local key file on first start) and builds what the
 * identity routes and the authentication middleware share.
 */
export async function createIdentityServices(
  config: Readonly<Config>,
  clients: { db: DatabasePool; redis: Redis; temporal: () => TemporalHandle | undefined; meAnswers: MeAnswers },
  logger: Logger,
): Promise<IdentityDeps> {
  const keys = await loadSigningKeys(config.identity.jwt);
  return {
    config,
    db: clients.db,
    tokens: new TokenService(keys, config.identity.jwt, config.identity.ttl),
    throttle: new LoginThrottle(clients.redis, config.identity.loginThrottle, logger),
    redis: clients.redis,
    mailer: new Mailer(clients.temporal, config.mail.taskQueue, config.api.downstreamTimeoutMs, logger),
    verifyEmailLimit: new VerifyEmailLimit(clients.redis, config.identity.verifyEmailRequests, logger),
    subscriptions: new SubscriptionWorkflows(clients.temporal, config),
    meAnswers: clients.meAnswers,
    logger,
  };
}
