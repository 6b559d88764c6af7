/**
 * The e-mails the platform sends, as data: a flow names a template and gives its fields, and the
 * mail activity renders it (services/notify/deliver.ts) just before sending. Workflow histories
 * therefore hold the template's fields, not whole messages, and one change of wording reaches every
 * queued mail.
 */
export interface EmailTemplates {
  /** Registration and POST /auth/request-verify-email. */
  'verify-email': { link: string; expiresAt: string };
  /** POST /auth/request-reset for an existing account. */
  'reset-password': { link: string; expiresAt: string };
  /** POST /auth/invite for someone not yet a member. */
  'invite': { link: string; tenantName: string; invitedBy: string; expiresAt: string };
  /** POST /auth/invite for an existing active member: a notice instead of a conflict error. */
  'duplicate-invite': { tenantName: string; invitedBy: string };
  /** POST /users: the new account sets its own password. */
  'set-password': { link: string; tenantName: string; expiresAt: string };
  /** Recovery locked after repeated wrong recovery codes: the tenant owner is told someone is trying them. */
  'recovery-locked': { account: string; tenantName: string; lockedUntil: string };
  /** A change of the account's way of signing in, told to its holder (services/notify/security-mail.ts). */
  'security-change': { change: SecurityChange; occurredAt: string; provider?: string; ip?: string };
  /** Anything else a feature needs to tell someone (billing dunning, security alerts). */
  'notice': { subject: string; text: string };
}

/** What changed, for the 'security-change' mail (ASVS 2.2.3, 2.5.5, 2.8.5). */
export type SecurityChange = 'password-changed' | 'password-reset' | 'mfa-enabled' | 'mfa-disabled'
  | 'recovery-codes-regenerated' | 'provider-linked' | 'provider-unlinked' | 'mfa-code-reused';

export type EmailTemplateName = keyof EmailTemplates;

/** One mail: the recipient, a template and its fields. */
export type EmailMessage = {
  [Name in EmailTemplateName]: { to: string; template: Name; data: EmailTemplates[Name] };
}[EmailTemplateName];

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Paragraphs of plain text, and the one link of the mail as a button-less anchor. */
function compose(subject: string, paragraphs: string[], link?: { label: string; href: string }): RenderedEmail {
  const text = [...paragraphs, ...(link ? [`${link.label}: ${link.href}`] : [])].join('\n\n');
  const html = [
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(link ? [`<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>`] : []),
  ].join('\n');
  return { subject, text: `${text}\n`, html: `<!doctype html>\n<html><body>\n${html}\n</body></html>\n` };
}

const renderers: { [Name in EmailTemplateName]: (data: EmailTemplates[Name]) => RenderedEmail } = {
  'verify-email': ({ link, expiresAt }) => compose('Confirm your e-mail address', [
    'Please confirm that this is your e-mail address.',
    `The link works once and expires at ${expiresAt}. If you did not create an account, ignore this message.`,
  ], { label: 'Confirm e-mail address', href: link }),
  'reset-password': ({ link, expiresAt }) => compose('Reset your password', [
    'Someone asked to reset the password of the account with this e-mail address.',
    `The link works once and expires at ${expiresAt}. Setting a new password signs you out everywhere. `
      + 'If it was not you, ignore this message: your password stays as it is.',
  ], { label: 'Choose a new password', href: link }),
  'invite': ({ link, tenantName, invitedBy, expiresAt }) => compose(`You are invited to ${tenantName}`, [
    `${invitedBy} invited you to join ${tenantName}.`,
    `The invitation works once and expires at ${expiresAt}.`,
  ], { label: 'Accept the invitation', href: link }),
  'duplicate-invite': ({ tenantName, invitedBy }) => compose(`You are already a member of ${tenantName}`, [
    `${invitedBy} invited you to ${tenantName}, where you already have an account. Sign in as usual; nothing else is needed.`,
  ]),
  'set-password': ({ link, tenantName, expiresAt }) => compose(`Your account at ${tenantName}`, [
    `An account was created for you at ${tenantName}. Choose a password to sign in.`,
    `The link works once and expires at ${expiresAt}.`,
  ], { label: 'Choose a password', href: link }),
  'recovery-locked': ({ account, tenantName, lockedUntil }) => compose(`Security alert: recovery locked for ${account}`, [
    `Someone entered wrong recovery codes for the account ${account} of ${tenantName} several times in a row, `
      + `together with its correct password. Recovery with codes is locked for this account until ${lockedUntil}.`,
    'If this was not the account holder, their password is known to someone else: ask them to change it, '
      + 'and check the account\'s recent sign-ins.',
  ]),
  'security-change': (data) => renderSecurityChange(data),
  'notice': ({ subject, text }) => compose(subject, text.split(/\n{2,}/)),
};

/** Whoever did not make the change: the account may be in someone else's hands. */
const NOT_YOU = 'If this was not you, reset your password now with "Forgot password" and check the account\'s sessions; '
  + 'someone else may know your password.';

const SECURITY_CHANGES: { [Change in SecurityChange]: (provider: string) => { subject: string; what: string } } = {
  'password-changed': () => ({ subject: 'Your password was changed', what: 'The password of your account was changed. Your other sessions were signed out.' }),
  'password-reset': () => ({ subject: 'Your password was reset', what: 'The password of your account was reset with an e-mailed link. Every session was signed out.' }),
  'mfa-enabled': () => ({ subject: 'Two-factor authentication was turned on', what: 'Two-factor authentication was turned on for your account, with a new authenticator and new recovery codes.' }),
  'mfa-disabled': () => ({ subject: 'Two-factor authentication was turned off', what: 'Two-factor authentication was turned off for your account: the password alone now signs in.' }),
  'recovery-codes-regenerated': () => ({ subject: 'New recovery codes were generated', what: 'New recovery codes were generated for your account; the earlier ones no longer work.' }),
  'provider-linked': (provider) => ({ subject: `${provider} sign-in was linked to your account`, what: `Your account can now be signed in to with ${provider}.` }),
  'provider-unlinked': (provider) => ({ subject: `${provider} sign-in was removed from your account`, what: `Your account can no longer be signed in to with ${provider}.` }),
  'mfa-code-reused': () => ({
    subject: 'Security alert: a used two-factor code was tried',
    what: 'Someone signed in to your account with its correct password and a two-factor code that had already been used. '
      + 'The sign-in was refused.',
  }),
};

function renderSecurityChange({ change, occurredAt, provider, ip }: EmailTemplates['security-change']): RenderedEmail {
  const { subject, what } = SECURITY_CHANGES[change](provider ?? 'An external provider');
  return compose(subject, [
    what,
    `When: ${occurredAt}${ip ? `, from the address ${ip}` : ''}.`,
    change === 'mfa-code-reused' ? 'Your password is known to someone else: change it now, and check the account\'s sessions.' : NOT_YOU,
  ]);
}

export function renderEmail(message: EmailMessage): RenderedEmail {
  return (renderers[message.template] as (data: EmailMessage['data']) => RenderedEmail)(message.data);
}
