import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { bearer, get, post, registerAccount } from '../../helpers/identity';
import { linkToken, startMailGateway, waitForMail, waitForMails, type MailGateway } from '../../helpers/mail';

/**
 * E-mail verification through the whole mail path: registration sends the link (gateway → Temporal
 * → SMTP → Mailpit), POST /auth/verify-email redeems it once; POST /auth/request-verify-email sends
 * a new one at most 3 times per hour. A second gateway gives verification links a 1-second lifetime.
 */
jest.setTimeout(60_000);

let mail: MailGateway;
let shortLived: MailGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [mail, shortLived] = await Promise.all([
    startMailGateway(),
    startMailGateway({ env: { VERIFY_EMAIL_TOKEN_TTL_SECONDS: '1' } }),
  ]);
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'verify-email-test-owner' });
});

afterAll(async () => {
  await Promise.all([mail?.close(), shortLived?.close()]);
  await owner?.end();
});

const emailVerified = async (userId: string) => (await owner.one(sql.type(z.object({ verified: z.boolean() }))`
  SELECT email_verified AS verified FROM users WHERE id = ${userId}
`)).verified;

describe('verification on registration', () => {
  it('mails a link whose token verifies the address once', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    const message = await waitForMail(account.user.email);
    expect(message.subject).toBe('Confirm your e-mail address');
    expect(message.text).toContain(`${gateway.config.mail.linkBaseUrl}/verify-email?token=`);
    const token = linkToken(message);

    const verified = await post(gateway, '/auth/verify-email', { token });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ email_verified: true });
    expect(await emailVerified(account.user.id)).toBe(true);
    expect((await get(gateway, '/auth/me', account.accessToken)).body).toMatchObject({ emailVerified: true });

    // Single use: the token was deleted when it was redeemed.
    const replayed = await post(gateway, '/auth/verify-email', { token });
    expect(replayed.body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
  });

  it('stores only the SHA-256 of the token, with a 24-hour lifetime', async () => {
    const account = await registerAccount(mail.gateway);
    const token = linkToken(await waitForMail(account.user.email));
    const stored = await owner.one(sql.type(z.object({ hash: z.instanceof(Buffer), hours: z.number(), tenantId: z.string() }))`
      SELECT token_hash AS hash, round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours, tenant_id AS "tenantId"
      FROM one_time_tokens WHERE user_id = ${account.user.id} AND purpose = 'verify_email'
    `);
    expect(stored.hash).toHaveLength(32);
    expect(stored.hash.toString('base64url')).not.toBe(token);
    expect(stored.hours).toBe(24);
    expect(stored.tenantId).toBe(account.tenant.id);
  });

  it('answers 401 unauthorized for an unknown token and 400 for one that cannot be a token', async () => {
    const { gateway } = mail;
    expect((await post(gateway, '/auth/verify-email', { token: 'A'.repeat(43) })).body)
      .toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
    expect((await post(gateway, '/auth/verify-email', { token: 'short' })).body)
      .toMatchObject({ status: 400, type: gateway.problemType('validation-error') });
    expect((await post(gateway, '/auth/verify-email', { token: 'A'.repeat(43), extra: 1 })).body)
      .toMatchObject({ status: 400, errors: [{ field: 'extra', code: 'UNKNOWN_FIELD' }] });
  });

  it('answers 401 token-expired after the lifetime, and changes nothing', async () => {
    const { gateway } = shortLived;
    const account = await registerAccount(gateway);
    const token = linkToken(await waitForMail(account.user.email));
    await waitFor('the 1-second token to expire', async () => owner.exists(sql.unsafe`
      SELECT 1 FROM one_time_tokens WHERE user_id = ${account.user.id} AND expires_at <= now()
    `));

    const expired = await post(gateway, '/auth/verify-email', { token });
    expect(expired.body).toMatchObject({ status: 401, type: gateway.problemType('token-expired') });
    expect(await emailVerified(account.user.id)).toBe(false);
  });

  it('does not accept a verification token for another purpose', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    const token = linkToken(await waitForMail(account.user.email));
    const asReset = await post(gateway, '/auth/reset-password', { token, password: 'another-long-passphrase-7' });
    expect(asReset.body).toMatchObject({ status: 401, type: gateway.problemType('unauthorized') });
    expect((await post(gateway, '/auth/verify-email', { token })).status).toBe(200);
  });
});

describe('POST /auth/request-verify-email', () => {
  const requestLink = (accessToken: string) => post(mail.gateway, '/auth/request-verify-email', {}, bearer(accessToken));

  it('sends a new working link, at most 3 per hour, then 429 with Retry-After', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    for (let i = 0; i < 3; i++) {
      const accepted = await requestLink(account.accessToken);
      expect(accepted.status).toBe(202);
      expect(accepted.body).toBe('');
    }
    const refused = await requestLink(account.accessToken);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ type: gateway.problemType('rate-limit-exceeded'), retryAfter: expect.any(Number) });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((refused.body as { retryAfter: number }).retryAfter).toBe(retryAfter);

    // Registration's mail and the three requested ones, each with a link of its own.
    const mails = await waitForMails(account.user.email, 4);
    expect(mails).toHaveLength(4);
    expect((await post(gateway, '/auth/verify-email', { token: linkToken(mails[0]) })).body).toEqual({ email_verified: true });
  });

  it('needs a bearer token', async () => {
    const response = await post(mail.gateway, '/auth/request-verify-email', {});
    expect(response.body).toMatchObject({ status: 401, type: mail.gateway.problemType('unauthorized') });
  });

  it('sends nothing for an address that is already verified', async () => {
    const { gateway } = mail;
    const account = await registerAccount(gateway);
    await post(gateway, '/auth/verify-email', { token: linkToken(await waitForMail(account.user.email)) });
    expect((await requestLink(account.accessToken)).status).toBe(202);
    const tokens = await owner.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int AS count FROM one_time_tokens WHERE user_id = ${account.user.id}
    `);
    expect(tokens).toBe(0);
  });
});
