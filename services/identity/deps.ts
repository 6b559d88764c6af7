import type { Redis } from 'ioredis';
import type { Config } from '../../common/config';
import type { TokenService } from './tokens';
import type { Logger } from '../../common/logger';
import type { DatabasePool } from '../../db/pool';
import type { Mailer } from '../notify/mailer';
import type { SubscriptionWorkflows } from '../billing/subscription-workflows';
import type { LoginThrottle } from './login-throttle';
import type { MeAnswer } from './user-view';
import type { VerifyEmailLimit } from './verify-email-limit';

/**
 * GET /auth/me's answers as the gateway keeps them (api/runtime/me-cache.ts). Whatever changes an
 * account or its memberships calls forget(account) once its transaction has ended, so the account's
 * next request through this gateway reads again.
 */
export interface MeAnswers {
  answer(tenantId: string, userId: string): Promise<MeAnswer | null>;
  forget(userId: string): void;
}

/** What the identity flows work with; built once per gateway by createIdentityServices. */
export interface IdentityDeps {
  config: Readonly<Config>;
  /** The application pool (platform_app): every tenant-owned statement runs under withTenant. */
  db: DatabasePool;
  tokens: TokenService;
  throttle: LoginThrottle;
  /** Short-lived shared state (started provider sign-ins). */
  redis: Redis;
  /** Verification, reset, invitation and set-password e-mails (services/notify/mailer.ts). */
  mailer: Mailer;
  verifyEmailLimit: VerifyEmailLimit;
  /** Starts the subscription workflow of every tenant registration creates. */
  subscriptions: SubscriptionWorkflows;
  meAnswers: MeAnswers;
  logger: Logger;
}

/** The token pair (docs/reference/identity.md, Resources) of login, refresh, select-tenant and switch-tenant. */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}
