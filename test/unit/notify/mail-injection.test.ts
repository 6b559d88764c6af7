import nodemailer from 'nodemailer';
import { renderEmail } from '../../../services/notify/templates';

/**
 * docs/security.md, V5.2.2 / 5.2.3: what users write (a tenant's name, an inviter's name) reaches a
 * mail escaped in its HTML, and cannot add a header through the subject: nodemailer, as
 * services/notify/smtp.ts uses it, folds a line break of a header value into a space.
 */
const HOSTILE = 'Acme <script>alert(1)</script>\r\nBcc: victim@example.test';

describe('mails built from user text', () => {
  const mail = renderEmail({
    to: 'new.member@example.test', template: 'invite',
    data: { link: 'https://app.example.test/accept?token=t', tenantName: HOSTILE, invitedBy: HOSTILE, expiresAt: '2030-01-01T00:00:00Z' },
  });

  it('escape it in the HTML part', () => {
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('cannot add a header through the subject', async () => {
    const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
    const sent = await transport.sendMail({ from: 'platform@example.test', to: 'new.member@example.test', ...mail });
    const headers = (sent.message as Buffer).toString('utf8').split('\r\n\r\n')[0];
    expect(headers).not.toMatch(/^bcc:/im);
    expect(sent.envelope.to).toEqual(['new.member@example.test']);
  });
});
