import { newId } from '../../common/ids';
import { hashPassword } from './passwords';
import { BUILT_IN_ROLES } from '../access/permissions';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { insertTrialSubscription } from '../../db/queries/billing/subscriptions.queries';
import { assignRole, insertBuiltInRoles } from '../../db/queries/identity/roles.queries';
import { insertMembership, insertTenant } from '../../db/queries/identity/tenants.queries';
import { insertUser, selectUserProfile } from '../../db/queries/identity/users.queries';
import type { IdentityDeps, TokenPair } from './deps';
import { sendVerificationEmail } from './email-verification';
import { enqueueAuthEvent } from './events';
import { issueRecoveryCodes } from './mfa/recovery-codes';
import { issuePair, publicPair } from './sessions';
import { toUserView, type UserView } from './user-view';

export interface Registration {
  email: string;
  password: string;
  firstName?: string;
  lastName?: string;
  tenantName?: string;
}

export interface Registered extends TokenPair {
  user: UserView;
  tenant: { id: string; name: string };
  /** The account's 10 recovery codes (docs/reference/identity.md#rule-2), shown only in this response. */
  recoveryCodes: string[];
}

/** The plan every new tenant starts its trial on (docs/reference/billing.md#rule-3). */
const TRIAL_PLAN = 'starter';

/** "Ada's workspace" when no tenant name is given. */
function defaultTenantName(account: NewAccount): string {
  const who = account.firstName || account.email.slice(0, account.email.indexOf('@'));
  return `${who}'s workspace`;
}

/** POST /auth/register: an account with a password (Argon2id) and its own tenant. */
export async function register(deps: IdentityDeps, registration: Registration): Promise<Registered> {
  const { password, ...account } = registration;
  return createAccount(deps, { ...account, passwordHash: await hashPassword(deps.config.identity.passwordPepper, password) });
}

/** An account as registration and sign-in by provider create it. */
export interface NewAccount {
  email: string;
  /** Null for an account that signs in through a provider only. */
  passwordHash: string | null;
  firstName?: string;
  lastName?: string;
  tenantName?: string;
  /** True only when a trusted party (a provider's email_verified) has already proved the address. */
  emailVerified?: boolean;
}

/**
 * A new account and its own tenant, in one transaction of that tenant: tenant, user, owner
 * membership, the built-in roles, the trialing subscription, whatever `alsoInTransaction` adds
 * (a provider link), the recovery codes, the first session, the auth.user.created event and the
 * verification e-mail's token (its mail handed to Temporal before the commit) either all exist or
 * none does. A taken address fails on the unique index users_email_lower (409 conflict, mapped in
 * api/http/constraint-problems.ts).
 */
export async function createAccount(
  deps: IdentityDeps,
  account: NewAccount,
  alsoInTransaction?: (tx: DatabaseTransactionConnection, account: { userId: string; tenantId: string }) => Promise<void>,
): Promise<Registered> {
  const tenant = { id: newId(), name: account.tenantName ?? defaultTenantName(account) };
  const userId = newId();
  const roles = BUILT_IN_ROLES.map((role) => ({ ...role, id: newId() }));
  const owner = roles.find((role) => role.name === 'owner')!;

  return withTenant(deps.db, tenant.id, async (tx) => {
    await insertTenant(tx, tenant);
    await insertUser(tx, {
      id: userId, email: account.email, passwordHash: account.passwordHash, emailVerified: account.emailVerified ?? false,
      firstName: account.firstName ?? '', lastName: account.lastName ?? '',
    });
    await insertMembership(tx, tenant.id, userId);
    await insertBuiltInRoles(tx, tenant.id, userId, roles);
    await assignRole(tx, tenant.id, userId, owner.id);
    await insertTrialSubscription(tx, { id: newId(), tenantId: tenant.id, planId: TRIAL_PLAN, trialDays: deps.config.billing.trialDays });
    await alsoInTransaction?.(tx, { userId, tenantId: tenant.id });
    const recoveryCodes = await issueRecoveryCodes(deps.config, tx, tenant.id, userId);

    const profile = (await selectUserProfile(tx, userId))!;
    await enqueueAuthEvent(tx, 'auth.user.created', tenant.id, userId, {
      email: profile.email,
      display_name: `${profile.firstName} ${profile.lastName}`.trim() || profile.email,
      role: 'owner',
      created_at: profile.createdAt,
    });
    // An address a provider has already proved needs no link.
    if (!profile.emailVerified) await sendVerificationEmail(deps, tx, { userId, tenantId: tenant.id, email: profile.email });

    const pair = await issuePair(deps, tx, { userId, email: profile.email, tenantId: tenant.id, mfa: profile.mfaEnabled });
    // Last, inside the transaction: if Temporal refuses, the registration fails (503) rather than
    // leaving a tenant without its subscription workflow. A workflow whose registration then fails to
    // commit finds no subscription row and ends by itself (workflows/billing/subscription.workflow.ts).
    await deps.subscriptions.start(tenant.id);
    return { ...publicPair(pair), user: toUserView(profile, tenant.id, [owner.name]), tenant, recoveryCodes };
  });
}
