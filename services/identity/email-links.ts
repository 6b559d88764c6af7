import type { Config } from '../../common/config';

/** The pages of the web application that redeem a one-time token. */
export type LinkAction = 'verify-email' | 'reset-password' | 'accept-invite' | 'set-password';

/** One-time tokens reach the user only by e-mail, as `token=<value>` in a link's query (docs/decisions/notify.md, Sending e-mail). */
export function emailLink(config: Readonly<Config>, action: LinkAction, token: string): string {
  return `${config.mail.linkBaseUrl}/${action}?token=${encodeURIComponent(token)}`;
}
