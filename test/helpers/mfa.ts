import type { TestGateway } from './app';
import { post, type RegisteredAccount } from './identity';
import { TestAuthenticator } from './totp';

export interface MfaAccount {
  authenticator: TestAuthenticator;
  /** The codes the activation answered (the registration's are replaced). */
  recoveryCodes: string[];
}

/** Turns two-factor on for an account through the API: enable, then verify with the first code. */
export async function turnOnMfa(gateway: TestGateway, account: RegisteredAccount): Promise<MfaAccount> {
  const headers = { authorization: `Bearer ${account.accessToken}` };
  const enabled = await post<{ secret: string }>(gateway, '/auth/mfa/enable', {}, headers);
  if (enabled.status !== 200) throw new Error(`mfa/enable answered ${enabled.status}: ${JSON.stringify(enabled.body)}`);
  const authenticator = new TestAuthenticator(enabled.body.secret);
  const verified = await post<{ recoveryCodes: string[] }>(gateway, '/auth/mfa/verify', { code: await authenticator.nextCode() }, headers);
  if (verified.status !== 200) throw new Error(`mfa/verify answered ${verified.status}: ${JSON.stringify(verified.body)}`);
  return { authenticator, recoveryCodes: verified.body.recoveryCodes };
}
