import type { Config } from '../../../common/config';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { countRecoveryCodes, replaceRecoveryCodes } from '../../../db/queries/identity/recovery.queries';
import type { AuthState } from '../../../common/context';
import type { IdentityDeps } from '../deps';
import { enqueueAuthEvent } from '../events';
import { recordAccountAudit } from './audit';
import { mfaKeys } from './mfa-keys';
import { hashRecoveryCode, newRecoveryCodes } from './recovery-code-crypto';

/**
 * A fresh set of 10 recovery codes for the account, in the caller's transaction (registration,
 * two-factor activation, regeneration). Only their hashes are stored and earlier codes stop working;
 * the plain codes are returned to be shown once.
 */
export async function issueRecoveryCodes(
  config: Readonly<Config>, tx: DatabaseTransactionConnection, tenantId: string, userId: string,
): Promise<string[]> {
  const codes = newRecoveryCodes();
  const key = mfaKeys(config.identity.mfa.encryptionKey).recoveryCodeKey;
  await replaceRecoveryCodes(tx, tenantId, userId, codes.map((code) => hashRecoveryCode(key, userId, code)));
  return codes;
}

/** GET /auth/recovery-codes. */
export function remainingRecoveryCodes(deps: IdentityDeps, auth: AuthState): Promise<number> {
  return withTenant(deps.db, auth.tenantId, (tx) => countRecoveryCodes(tx, auth.tenantId, auth.userId));
}

/** POST /auth/recovery-codes/regenerate: 10 new codes, the old ones invalidated. */
export function regenerateRecoveryCodes(deps: IdentityDeps, auth: AuthState, ip: string): Promise<string[]> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    const codes = await issueRecoveryCodes(deps.config, tx, auth.tenantId, auth.userId);
    await recordAccountAudit(tx, { tenantId: auth.tenantId, userId: auth.userId, action: 'auth.recovery_codes.regenerated', ip });
    await enqueueAuthEvent(tx, 'auth.recovery_codes.regenerated', auth.tenantId, auth.userId, { changed_at: new Date().toISOString() });
    return codes;
  });
}
