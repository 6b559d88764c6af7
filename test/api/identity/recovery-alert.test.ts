import { createDbPool, type DatabasePool } from '../../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { addMembership, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { mailsTo, startMailGateway, waitForMail, type MailGateway } from '../../helpers/mail';

/**
 * docs/reference/identity.md#rule-22: 5 wrong recovery codes within 15 minutes lock recovery for an hour AND alert
 * the owner. Through the real mail path (gateway → sendEmail workflow → SMTP → Mailpit): the owner of
 * every tenant the account belongs to receives the alert once, after the lock has committed.
 */
// The mail worker bundles the workflows first (webpack), which takes seconds on a busy machine.
jest.setTimeout(60_000);
let mail: MailGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  mail = await startMailGateway({
    env: {
      RECOVERY_MAX_ATTEMPTS: '5', RECOVERY_WINDOW_SECONDS: '900', RECOVERY_LOCK_SECONDS: '3600',
      RECOVERY_ACCOUNT_LOCK_FAILURES: '15',
    },
  });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'recovery-alert-test-owner' });
});

afterAll(async () => {
  await mail?.close();
  await owner?.end();
});

const ALERT_SUBJECT = (account: RegisteredAccount) => `Security alert: recovery locked for ${account.user.email}`;
const recover = (account: RegisteredAccount, recoveryCode: string) =>
  post(mail.gateway, '/auth/recovery', { email: account.user.email, password: account.password, recoveryCode });

describe('recovery lock owner alert', () => {
  it('mails the owner of each tenant of the account once when recovery locks', async () => {
    const teamOwner = await registerAccount(mail.gateway, { tenantName: 'Alert Team' });
    const member = await registerAccount(mail.gateway);
    await addMembership(owner, teamOwner.tenant.id, member.user.id);

    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await recover(member, 'zzzzzzzzzzzz')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
    // Attempts during the lock raise no new alert.
    expect((await recover(member, 'zzzzzzzzzzzz')).status).toBe(429);

    // The team's owner and the member (owner of the tenant registration made for it) are both told.
    const toTeamOwner = await waitForMail(teamOwner.user.email, ALERT_SUBJECT(member));
    expect(toTeamOwner.text).toContain('Alert Team');
    expect(toTeamOwner.text).toMatch(/locked for this account until \d{4}-\d{2}-\d{2}T/);
    const toMember = await waitForMail(member.user.email, ALERT_SUBJECT(member));
    expect(toMember.text).toContain(member.tenant.name);

    // One mail per owner and lock: wait for anything else in flight, then count.
    await waitForMail(teamOwner.user.email, 'Confirm your e-mail address');
    const alerts = (await mailsTo(teamOwner.user.email)).filter((m) => m.subject === ALERT_SUBJECT(member));
    expect(alerts).toHaveLength(1);
  });

  it('mails nobody for wrong codes that stay below the limit', async () => {
    const account = await registerAccount(mail.gateway);
    for (let i = 0; i < 4; i += 1) expect((await recover(account, 'zzzzzzzzzzzz')).status).toBe(401);
    // The verification mail of the registration went by the same path; once it is there, an alert would be too.
    await waitForMail(account.user.email, 'Confirm your e-mail address');
    expect((await mailsTo(account.user.email)).map((m) => m.subject)).not.toContain(ALERT_SUBJECT(account));
  });
});
