import { newId } from '../../../common/ids';
import { setGroupOffsets, topicBounds } from '../../../common/kafka-groups';
import { createLogger } from '../../../common/logger';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import type { GroupConsumer } from '../../../services/events/consumers/group-consumer';
import { topics } from '../../../services/events/topics';
import { Mailer } from '../../../services/notify/mailer';
import { createSecurityMailConsumer } from '../../../services/notify/security-mail';
import { testConsumerSettings } from '../../helpers/consumer-groups';
import { appUrl, migrateSharedDatabase } from '../../helpers/db';
import { call, type JsonResponse } from '../../helpers/http';
import { bearer, post, registerAccount, uniqueEmail, type RegisteredAccount } from '../../helpers/identity';
import { ensureCatalogueTopics, testKafka } from '../../helpers/kafka';
import { linkToken, mailsTo, startMailGateway, waitForMail, type MailGateway, type MailpitMessage } from '../../helpers/mail';
import { turnOnMfa } from '../../helpers/mfa';
import { startOidcIssuer, type TestIssuer } from '../../helpers/oidc-issuer';
import { connectDevServer, type DevServer } from '../../helpers/temporal';

/**
 * The account holder's security mail (ASVS 2.2.3, 2.5.5, 2.8.5; services/notify/security-mail.ts)
 * end to end: the identity flow writes its auth.* event in the change's transaction, the platform's
 * relay publishes it, the security-mail group (here under a group id of the test's own, from the
 * topic's end, serving only this file's tenants) hands the mail to the sendEmail workflow on the
 * test's notify task queue, and Mailpit receives it.
 */
// The mail worker bundles the workflows first (webpack), which takes seconds on a busy machine.
jest.setTimeout(90_000);
const PROVIDER = 'test-oidc';
const NEW_PASSWORD = 'another-quiet-harbour-77';
let mail: MailGateway;
let server: DevServer;
let app: DatabasePool;
let issuer: TestIssuer;
let group: GroupConsumer;
/** The tenants this file registered: the only ones its group mails for. */
const ours = new Set<string>();

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  issuer = await startOidcIssuer();
  [mail, server, app] = await Promise.all([
    startMailGateway({ env: { AUTH_PROVIDERS: JSON.stringify([issuer.settings(PROVIDER)]) } }),
    connectDevServer(),
    createDbPool(appUrl(), { maxPoolSize: 2, name: 'security-mail-test-app' }),
  ]);
  const kafka = testKafka();
  const logger = createLogger('security-mail-test', 'silent');
  const groupId = `test.security-mail-${newId().slice(-12)}`;
  group = createSecurityMailConsumer({
    kafka, db: app, logger, settings: testConsumerSettings, groupId,
    mailer: new Mailer(() => server, mail.taskQueue, 10_000, logger),
    tenantsServed: async (tenantIds) => new Set(tenantIds.filter((id) => ours.has(id))),
  });
  // From the topic's end: the shared broker keeps every earlier run's events.
  const admin = kafka.admin();
  await admin.connect();
  try {
    await setGroupOffsets(kafka, groupId, topics.auth.name,
      (await topicBounds(admin, topics.auth.name)).map(({ partition, high }) => ({ partition, offset: high })));
  } finally {
    await admin.disconnect();
  }
  await group.start();
});

afterAll(async () => {
  await group?.stop();
  await Promise.all([mail?.close(), server?.close(), issuer?.close()]);
  await app?.end();
});

async function account(): Promise<RegisteredAccount> {
  const registered = await registerAccount(mail.gateway);
  ours.add(registered.tenant.id);
  return registered;
}

const send = (who: RegisteredAccount, path: string, body: unknown = {}) => post(mail.gateway, path, body, bearer(who.accessToken));

/** The mail with this subject, checked to be the holder's security notice. */
async function notice(who: RegisteredAccount, subject: string): Promise<MailpitMessage> {
  const found = await waitForMail(who.user.email, subject, 60_000);
  expect(found.to).toEqual([who.user.email]);
  expect(found.text).toMatch(/When: \d{4}-\d{2}-\d{2}T/);
  return found;
}

describe('security mail to the account holder', () => {
  it('tells of a password changed with the current one', async () => {
    const holder = await account();
    expect((await send(holder, '/auth/change-password', { currentPassword: holder.password, newPassword: NEW_PASSWORD })).status).toBe(204);
    const mailed = await notice(holder, 'Your password was changed');
    expect(mailed.text).toContain('Your other sessions were signed out');
  });

  it('tells of a password reset by link', async () => {
    const holder = await account();
    expect((await post(mail.gateway, '/auth/request-reset', { email: holder.user.email })).status).toBe(202);
    const token = linkToken(await waitForMail(holder.user.email, 'Reset your password'));
    expect((await post(mail.gateway, '/auth/reset-password', { token, password: NEW_PASSWORD })).status).toBe(200);
    await notice(holder, 'Your password was reset');
  });

  it('tells of two-factor turned on and off and of new recovery codes', async () => {
    const holder = await account();
    const { authenticator } = await turnOnMfa(mail.gateway, holder);
    await notice(holder, 'Two-factor authentication was turned on');
    expect((await send(holder, '/auth/recovery-codes/regenerate')).status).toBe(200);
    await notice(holder, 'New recovery codes were generated');
    expect((await send(holder, '/auth/mfa/disable', { password: holder.password, code: await authenticator.nextCode() })).status).toBe(200);
    await notice(holder, 'Two-factor authentication was turned off');
  });

  it('tells of a used two-factor code tried at sign-in, and not of a wrong one', async () => {
    const holder = await account();
    const { authenticator } = await turnOnMfa(mail.gateway, holder);
    const signIn = (mfaCode: string) => post(mail.gateway, '/auth/login', { email: holder.user.email, password: holder.password, mfaCode });
    // A code that never matched is only wrong.
    const wrong = authenticator.lastCode() === '000000' ? '111111' : '000000';
    expect((await signIn(wrong)).body.type).toBe(mail.gateway.problemType('mfa-invalid'));
    // The code that activated two-factor, presented again.
    const replayed = await signIn(authenticator.lastCode());
    expect({ status: replayed.status, type: replayed.body.type }).toEqual({ status: 401, type: mail.gateway.problemType('mfa-invalid') });
    const alert = await notice(holder, 'Security alert: a used two-factor code was tried');
    expect(alert.text).toContain('from the address');
    // The alert is the only one: the wrong code's event, had there been one, came before it on the account's partition.
    expect((await mailsTo(holder.user.email)).filter((m) => m.subject === alert.subject)).toHaveLength(1);
  });

  it('tells of a provider linked and unlinked', async () => {
    const holder = await account();
    const person = { sub: `sub-${newId()}`, email: uniqueEmail('oidc'), email_verified: true, given_name: 'Grace', family_name: 'Hopper', name: 'Grace Hopper' };
    issuer.addAccount(person);
    const providerPath = `${mail.gateway.baseUrl}/v1/users/${holder.user.id}/providers/${PROVIDER}`;
    const started: JsonResponse = await call(providerPath, { method: 'POST', headers: bearer(holder.accessToken) });
    expect(started.status).toBe(200);
    const redirect = await issuer.signIn(String(started.body.url), person.sub);
    const linked = await call(`${mail.gateway.baseUrl}/v1/auth/callback/${PROVIDER}${redirect.search}`, { headers: bearer(holder.accessToken) });
    expect(linked.status).toBe(200);
    await notice(holder, `${PROVIDER} sign-in was linked to your account`);
    expect((await call(providerPath, { method: 'DELETE', headers: bearer(holder.accessToken) })).status).toBe(204);
    await notice(holder, `${PROVIDER} sign-in was removed from your account`);
  });
});
