import Joi from 'joi';
import { config } from '../../common/config';
import { recordAudit } from '../../services/audit/writer';
import { enqueueEvent } from '../../services/events/publish';
import { newId } from '../../common/ids';
import {
  hashPassword, isBreachedPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword,
} from '../../services/identity/passwords';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { assignRole } from '../../db/queries/identity/roles.queries';
import { insertMembership } from '../../db/queries/identity/tenants.queries';
import {
  hasMembership, insertOperatorAccount, insertPlatformOwnerRole, insertPlatformSubscription, insertPlatformTenant,
  lockPlatformSetup, PLATFORM_OWNER_ROLE, selectAccountByEmail, selectPlatformOwnerRoleId, selectPlatformOwners,
  selectPlatformTenantId,
} from '../../db/queries/identity/platform.queries';

export const PLATFORM_TENANT_NAME = 'Platform';

/** A refusal the operator must act on (exit 1); nothing was changed. */
export class SetupRefused extends Error {}
/** Bad input (exit 2); nothing was changed. */
export class SetupUsageError extends Error {}

export interface SetupOwnerInput {
  email: string;
  password: string;
}

export interface SetupOwnerResult {
  changed: boolean;
  tenantId: string;
  userId: string;
}

// The registration rules of docs/reference/identity.md (rules 1 and 3; api/routes/identity/auth.schemas.ts), checked here too
// because the command does not go through the gateway.
const emailSchema = Joi.string().trim().max(254).email({ tlds: { allow: false } }).lowercase().required();

function checkedInput(input: SetupOwnerInput): SetupOwnerInput {
  const checked = emailSchema.validate(input.email);
  if (checked.error) throw new SetupUsageError(`--email: ${input.email} is not an e-mail address`);
  if (input.password.length < PASSWORD_MIN_LENGTH) throw new SetupUsageError(`--password: at least ${PASSWORD_MIN_LENGTH} characters (TOO_SHORT)`);
  if (input.password.length > PASSWORD_MAX_LENGTH) throw new SetupUsageError(`--password: at most ${PASSWORD_MAX_LENGTH} characters (TOO_LONG)`);
  if (isBreachedPassword(input.password)) throw new SetupUsageError('--password: it appears in a list of breached passwords (BREACHED_PASSWORD)');
  return { email: checked.value, password: input.password };
}

/** Finds or creates one thing, and says which. */
async function ensure(report: (line: string) => void, what: string, find: () => Promise<string | null>, create: () => Promise<string>) {
  const found = await find();
  if (found) {
    report(`${what}: exists (${found})`);
    return { id: found, created: false };
  }
  const id = await create();
  report(`${what}: created (${id})`);
  return { id, created: true };
}

/**
 * `npm run platform -- setup-owner`: the platform tenant (kind 'platform', at most one), the
 * platform-scoped Platform Owner role (permissions `*`, system.* included), the account and its
 * membership with that role, in one transaction of the owner database role. Idempotent: what
 * exists is kept as it is (the password of an existing account is never changed), so a second run
 * for the same e-mail changes nothing. Another e-mail becomes an additional Platform Owner; an
 * address that already has an account (a customer's) must come with that account's password.
 */
export async function setupOwner(owner: DatabasePool, input: SetupOwnerInput, report: (line: string) => void): Promise<SetupOwnerResult> {
  const { email, password } = checkedInput(input);
  // The pepper of this deployment's gateways, or they could not verify the hash.
  const pepper = config().identity.passwordPepper;
  // Hashing is slow: done before the lock, used only if the account is new.
  const passwordHash = await hashPassword(pepper, password);
  return owner.transaction(async (tx) => {
    await lockPlatformSetup(tx);
    const tenant = await ensure(report, 'platform tenant', () => selectPlatformTenantId(tx), async () => {
      const id = newId();
      await insertPlatformTenant(tx, id, PLATFORM_TENANT_NAME);
      await insertPlatformSubscription(tx, newId(), id);
      return id;
    });
    const role = await ensure(report, `role ${PLATFORM_OWNER_ROLE} (platform scope, *)`, () => selectPlatformOwnerRoleId(tx), async () => {
      const id = newId();
      await insertPlatformOwnerRole(tx, id);
      return id;
    });
    const owners = await selectPlatformOwners(tx);
    const account = await ensureAccount(tx, report, { email, password, passwordHash, pepper, tenantId: tenant.id }, (userId) => owners.some((o) => o.userId === userId));
    const others = owners.filter((existing) => existing.userId !== account.id);
    if (others.length > 0) {
      const named = others.slice(0, 3).map((o) => o.email).join(', ');
      report(`note: ${others.length} other Platform Owner(s) exist: ${named}${others.length > 3 ? ', ...' : ''}`);
    }

    const joined = !owners.some((o) => o.userId === account.id);
    if (joined) {
      if (!await hasMembership(tx, tenant.id, account.id)) await insertMembership(tx, tenant.id, account.id);
      await assignRole(tx, tenant.id, account.id, role.id);
      await recordAudit(tx, {
        tenantId: tenant.id, source: 'platform-cli', action: 'auth.platform_owner.created', entityType: 'user', entityId: account.id,
        after: { email, role: PLATFORM_OWNER_ROLE }, meta: { accountCreated: account.created },
      });
      report(`membership of ${email} in the platform tenant with ${PLATFORM_OWNER_ROLE}: created`);
    } else {
      report(`membership of ${email} in the platform tenant with ${PLATFORM_OWNER_ROLE}: exists`);
    }
    const changed = tenant.created || role.created || account.created || joined;
    report(changed ? `Platform Owner ${email} is set up.` : `Platform Owner ${email} was already set up; nothing changed.`);
    return { changed, tenantId: tenant.id, userId: account.id };
  });
}

async function ensureAccount(
  tx: DatabaseTransactionConnection,
  report: (line: string) => void,
  given: { email: string; password: string; passwordHash: string; pepper: string; tenantId: string },
  isPlatformOwner: (userId: string) => boolean,
): Promise<{ id: string; created: boolean }> {
  const { email, tenantId } = given;
  const existing = await selectAccountByEmail(tx, email);
  if (existing) {
    if (existing.deleted) throw new SetupRefused(`The account ${email} is deleted; restore it first`);
    // Making someone else's account (a customer's) a Platform Owner needs that account's password.
    if (!isPlatformOwner(existing.id) && !await verifyPassword(given.pepper, existing.passwordHash, given.password)) {
      throw new SetupRefused(`An account ${email} exists and the password does not match it`);
    }
    report(`account ${email}: exists (${existing.id}); its password is not changed`);
    return { id: existing.id, created: false };
  }
  const id = newId();
  await insertOperatorAccount(tx, { id, email, passwordHash: given.passwordHash });
  await enqueueEvent(tx, {
    tenantId, type: 'auth.user.created', source: 'identity', key: id,
    data: { user_id: id, tenant_id: tenantId, email, display_name: 'Platform Owner', role: 'owner', created_at: new Date().toISOString() },
  });
  report(`account ${email}: created (${id})`);
  return { id, created: true };
}
