import { issueOneTimeToken, redeemOneTimeToken } from './one-time-tokens';
import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { markEmailVerified } from '../../db/queries/identity/security-flows.queries';
import { selectUserProfile } from '../../db/queries/identity/users.queries';
import type { AuthState } from '../../common/context';
import { changingAccounts } from './account-changes';
import type { IdentityDeps } from './deps';
import { emailLink } from './email-links';

export interface VerificationSubject {
  userId: string;
  tenantId: string;
  email: string;
}

/**
 * Issues a verification token in the caller's transaction and hands its mail to Temporal before that
 * transaction commits: if the hand-over fails, the change that needed the mail (a registration)
 * fails with it, so an account never exists without its link on the way. The reverse (mail handed
 * over, commit then failing) sends a link that answers 401, which is harmless.
 */
export async function sendVerificationEmail(
  deps: Pick<IdentityDeps, 'config' | 'mailer'>,
  tx: DatabaseTransactionConnection,
  subject: VerificationSubject,
): Promise<void> {
  const token = await issueOneTimeToken(tx, deps.config.identity.oneTimeTokenTtl, { purpose: 'verify_email', ...subject });
  await deps.mailer.send({
    to: subject.email,
    template: 'verify-email',
    data: { link: emailLink(deps.config, 'verify-email', token.value), expiresAt: token.expiresAt },
  }, `verify-email:${token.id}`, subject.tenantId);
}

/**
 * POST /auth/request-verify-email: a new link, at most 3 per hour per user (429 after). An address
 * that is already verified gets no mail; the answer is the same 202.
 */
export async function requestVerificationEmail(deps: IdentityDeps, auth: AuthState): Promise<void> {
  await deps.verifyEmailLimit.take(auth.userId);
  await withTenant(deps.db, auth.tenantId, async (tx) => {
    const profile = await selectUserProfile(tx, auth.userId);
    if (!profile || profile.deletedAt !== null) throw problems.unauthorized('The account cannot be used');
    if (profile.emailVerified) return;
    await sendVerificationEmail(deps, tx, { userId: profile.id, tenantId: auth.tenantId, email: profile.email });
  });
}

/** POST /auth/verify-email: the link's token, once; only while the account still has the address it went to. */
export function verifyEmail(deps: IdentityDeps, token: string): Promise<{ email_verified: true }> {
  return changingAccounts(deps, (changed) => redeemOneTimeToken(deps.db, ['verify_email'], token, async (tx, redeemed) => {
    if (!redeemed.userId || !await markEmailVerified(tx, redeemed.userId, redeemed.email)) {
      throw problems.unauthorized('The link no longer matches the account');
    }
    changed(redeemed.userId);
    return { email_verified: true };
  }));
}
