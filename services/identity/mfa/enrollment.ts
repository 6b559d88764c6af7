import { verifyPassword } from '../passwords';
import { problems } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import {
  activateMfa, deactivateMfa, lockMfaState, storePendingSecret, type MfaState,
} from '../../../db/queries/identity/mfa.queries';
import type { AuthState } from '../../../common/context';
import { changeAccount } from '../account-changes';
import type { IdentityDeps } from '../deps';
import { enqueueAuthEvent } from '../events';
import { recordAccountAudit } from './audit';
import { mfaKeys } from './mfa-keys';
import { issueRecoveryCodes } from './recovery-codes';
import { acceptTotpCode } from './second-factor';
import { sealTotpSecret } from './secret-crypto';
import { newTotpSecret, provisioning, type Provisioning } from './totp';

/** The caller's two-factor state, locked for the transaction; gone means the membership is gone. */
async function stateOf(tx: DatabaseTransactionConnection, auth: AuthState): Promise<MfaState> {
  const state = await lockMfaState(tx, auth.userId);
  if (!state) throw problems.unauthorized('The account is no longer a member of this tenant');
  return state;
}

/**
 * POST /auth/mfa/enable: a new secret, stored sealed as a pending setup until /auth/mfa/verify
 * proves the authenticator has it. Calling it again replaces a pending secret; with two-factor
 * already on it is 409, because replacing an active secret must go through disable (password and code).
 */
export async function enableMfa(deps: IdentityDeps, auth: AuthState): Promise<Provisioning> {
  const secret = newTotpSecret();
  const email = await changeAccount(deps, auth.tenantId, auth.userId, async (tx) => {
    const state = await stateOf(tx, auth);
    if (state.mfaEnabled) throw problems.conflict('Two-factor authentication is already on; disable it first');
    await storePendingSecret(tx, auth.userId, sealTotpSecret(mfaKeys(deps.config.identity.mfa.encryptionKey).secretKey, auth.userId, secret));
    return state.email;
  });
  return provisioning(deps.config.identity.mfa.issuer, email, secret);
}

export interface Activated {
  mfaEnabled: true;
  /** Recovery codes are generated at 2FA enable (docs/reference/identity.md#rule-17); shown this once. */
  recoveryCodes: string[];
}

/**
 * POST /auth/mfa/verify: a code of the pending secret activates two-factor and issues a new set of
 * recovery codes (the earlier set stops working).
 */
export function verifyMfa(deps: IdentityDeps, auth: AuthState, code: string, ip: string): Promise<Activated> {
  return changeAccount(deps, auth.tenantId, auth.userId, async (tx) => {
    const state = await stateOf(tx, auth);
    if (state.mfaEnabled) throw problems.conflict('Two-factor authentication is already on');
    if (!state.secret) throw problems.conflict('No two-factor setup is pending; call /auth/mfa/enable first');
    if (!await acceptTotpCode(deps, tx, auth.userId, { secret: state.secret, lastStep: state.lastStep }, code)) throw problems.mfaInvalid();
    await activateMfa(tx, auth.userId);
    const recoveryCodes = await issueRecoveryCodes(deps.config, tx, auth.tenantId, auth.userId);
    await recordAccountAudit(tx, { tenantId: auth.tenantId, userId: auth.userId, action: 'auth.mfa.enabled', ip });
    await enqueueAuthEvent(tx, 'auth.mfa.enabled', auth.tenantId, auth.userId, { changed_at: new Date().toISOString() });
    return { mfaEnabled: true, recoveryCodes };
  });
}

export interface DisableRequest {
  password: string;
  /** Required, except within the reset window a successful /auth/recovery opens. */
  code?: string;
}

/**
 * POST /auth/mfa/disable: the current password and a current code, or, shortly after a successful
 * recovery (the authenticator is lost), the password alone. Wrong passwords and codes count in the
 * login throttle like failed logins, so a stolen session cannot be used to guess either.
 */
export async function disableMfa(deps: IdentityDeps, auth: AuthState, request: DisableRequest, ip: string): Promise<{ mfaEnabled: false }> {
  await deps.throttle.assertAllowed(auth.email, ip);
  const refusal = await changeAccount(deps, auth.tenantId, auth.userId, async (tx) => {
    const state = await stateOf(tx, auth);
    if (!state.mfaEnabled || !state.secret) return problems.conflict('Two-factor authentication is off');
    if (!await verifyPassword(deps.config.identity.passwordPepper, state.passwordHash, request.password)) return problems.invalidCredentials();
    if (request.code === undefined) {
      if (!state.resetAllowed) return problems.mfaRequired();
    } else if (!await acceptTotpCode(deps, tx, auth.userId, { secret: state.secret, lastStep: state.lastStep }, request.code)) {
      return problems.mfaInvalid();
    }
    await deactivateMfa(tx, auth.userId);
    await recordAccountAudit(tx, {
      tenantId: auth.tenantId, userId: auth.userId, action: 'auth.mfa.disabled', ip,
      meta: { proof: request.code === undefined ? 'recovery' : 'totp' },
    });
    await enqueueAuthEvent(tx, 'auth.mfa.disabled', auth.tenantId, auth.userId, {
      proof: request.code === undefined ? 'recovery' : 'totp', changed_at: new Date().toISOString(),
    });
    return null;
  });
  if (refusal) {
    if (refusal.type === 'invalid-credentials' || refusal.type === 'mfa-invalid') await deps.throttle.recordFailure(auth.email, ip);
    throw refusal;
  }
  return { mfaEnabled: false };
}
