import { newId } from '../../common/ids';
import { hashPassword } from '../../common/identity/passwords';
import { BUILT_IN_ROLES } from '../../common/identity/permissions';
import { withTenant } from '../../db/tenant';
import { insertTrialSubscription } from '../../db/queries/billing/subscriptions.queries';
import { assignRole, insertBuiltInRoles } from '../../db/queries/identity/roles.queries';
import { insertMembership, insertTenant } from '../../db/queries/identity/tenants.queries';
import { insertUser, selectUserProfile } from '../../db/queries/identity/users.queries';
import type { IdentityDeps, TokenPair } from './deps';
import { sendVerificationEmail } from './email-verification';
import { enqueueAuthEvent } from './events';
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
}

/** DECISIONS.md: the plan every new tenant starts its trial on. */
const TRIAL_PLAN = 'starter';

/** "Ada's workspace" when no tenant name is given. */
function defaultTenantName(registration: Registration): string {
  const who = registration.firstName || registration.email.slice(0, registration.email.indexOf('@'));
  return `${who}'s workspace`;
}

/**
 * A new account and its own tenant, in one transaction of that tenant: tenant, user, owner
 * membership, the built-in roles, the trialing subscription, the first session, the
 * auth.user.created event and the verification e-mail's token (its mail handed to Temporal before
 * the commit) either all exist or none does. A taken address fails on the unique
 * index users_email_lower (409 conflict, mapped in api/http/constraint-problems.ts).
 */
export async function register(deps: IdentityDeps, registration: Registration): Promise<Registered> {
  const passwordHash = await hashPassword(registration.password);
  const tenant = { id: newId(), name: registration.tenantName ?? defaultTenantName(registration) };
  const userId = newId();
  const roles = BUILT_IN_ROLES.map((role) => ({ ...role, id: newId() }));
  const owner = roles.find((role) => role.name === 'owner')!;

  return withTenant(deps.db, tenant.id, async (tx) => {
    await insertTenant(tx, tenant);
    await insertUser(tx, {
      id: userId, email: registration.email, passwordHash,
      firstName: registration.firstName ?? '', lastName: registration.lastName ?? '',
    });
    await insertMembership(tx, tenant.id, userId);
    await insertBuiltInRoles(tx, tenant.id, userId, roles);
    await assignRole(tx, tenant.id, userId, owner.id);
    await insertTrialSubscription(tx, { id: newId(), tenantId: tenant.id, planId: TRIAL_PLAN, trialDays: deps.config.billing.trialDays });

    const profile = (await selectUserProfile(tx, userId))!;
    await enqueueAuthEvent(tx, 'auth.user.created', tenant.id, userId, {
      email: profile.email,
      display_name: `${profile.firstName} ${profile.lastName}`.trim() || profile.email,
      role: 'owner',
      created_at: profile.createdAt,
    });
    await sendVerificationEmail(deps, tx, { userId, tenantId: tenant.id, email: profile.email });

    const pair = await issuePair(deps, tx, { userId, email: profile.email, tenantId: tenant.id });
    return { ...publicPair(pair), user: toUserView(profile, tenant.id, [owner.name]), tenant };
  });
}
