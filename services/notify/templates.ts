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
  /** Anything else a feature needs to tell someone (billing dunning, security alerts). */
  'notice': { subject: string; text: string };
}

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
  'notice': ({ subject, text }) => compose(subject, text.split(/\n{2,}/)),
};

export function renderEmail(message: EmailMessage): RenderedEmail {
  return (renderers[message.template] as (data: EmailMessage['data']) => RenderedEmail)(message.data);
}
