import type { Config } from '../../common/config';

/** The pages of the web application that redeem a one-time token. */
export type LinkAction = 'verify-email' | 'reset-password' | 'accept-invite' | 'set-password';

/** DECISIONS.md: one-time tokens reach the user only by e-mail, as `token=<value>` in a link's query. */
export function emailLink(config: Readonly<Config>, action: LinkAction, token: string): string {
  return `${config.mail.linkBaseUrl}/${action}?token=${encodeURIComponent(token)}`;
}
