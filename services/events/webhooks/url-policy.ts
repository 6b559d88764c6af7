import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { problems } from '../../../common/problems';

/**
 * Where a webhook may be sent (issue 35, server-side request forgery; docs/decisions/events.md,
 * Outbound webhooks). A tenant names the URL and the platform's worker makes the request from
 * inside the platform's network, so the target must be a public address:
 *
 * | Target                                                   | Verdict                                    |
 * |----------------------------------------------------------|--------------------------------------------|
 * | public address over https                                | allowed                                    |
 * | http:// outside development                              | refused, unless to loopback that is allowed |
 * | loopback 127.0.0.0/8, ::1, `localhost`                   | refused unless WEBHOOKS_ALLOW_LOOPBACK      |
 * | private 10/8, 172.16/12, 192.168/16, ULA fc00::/7, CGNAT 100.64/10 | refused                          |
 * | link-local 169.254/16 (169.254.169.254, cloud metadata), fe80::/10 | refused in every profile         |
 * | unspecified, multicast, reserved, broadcast              | refused                                    |
 *
 * An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4 address it carries, and the
 * URL parser has already turned 2130706433 or 0x7f.1 into 127.0.0.1. The check runs at creation and PATCH (`checkWebhookUrl`: the URL's own host) and again at delivery on
 * every address the host resolves to (`webhookLookup`), whose checked address is the one connected
 * to, so a name that resolves elsewhere later (DNS rebinding) is refused then.
 */

export interface WebhookUrlPolicy {
  /** Plain http is accepted (NODE_ENV=development). */
  allowHttp: boolean;
  /** WEBHOOKS_ALLOW_LOOPBACK: a local receiver (the test stack's). Production refuses the setting. */
  allowLoopback: boolean;
}

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'not-routable';

function blockList(entries: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of entries) list.addSubnet(network, prefix, family);
  return list;
}

const LOOPBACK = blockList([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]);
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'],
  // Carrier-grade NAT (RFC 6598): inside a provider's network, as private as RFC 1918 to us.
  ['100.64.0.0', 10, 'ipv4'],
  // Unique local addresses (RFC 4193).
  ['fc00::', 7, 'ipv6'],
]);
const LINK_LOCAL = blockList([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]);
const NOT_ROUTABLE = blockList([
  // "This network" (0.0.0.0 reaches the host itself on Linux), IETF protocol assignments, multicast,
  // reserved and broadcast; the IPv6 unspecified address, multicast, and NAT64's well-known prefix
  // (which could carry any IPv4 address, a private one included).
  ['0.0.0.0', 8, 'ipv4'], ['192.0.0.0', 24, 'ipv4'], ['224.0.0.0', 4, 'ipv4'], ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'], ['ff00::', 8, 'ipv6'], ['64:ff9b::', 96, 'ipv6'],
]);

/** What kind of address an IP literal is (v4, v6, or v4 mapped into v6). */
export function classifyAddress(ip: string): AddressClass {
  const version = isIP(ip);
  if (version === 0) throw new Error(`${ip} is not an IP address`);
  // BlockList judges an IPv4-mapped IPv6 address (::ffff:10.0.0.1) by the IPv4 rules too.
  const [address, family] = [ip, version === 4 ? 'ipv4' : 'ipv6'] as const;
  if (LINK_LOCAL.check(address, family)) return 'link-local';
  if (LOOPBACK.check(address, family)) return 'loopback';
  if (PRIVATE.check(address, family)) return 'private';
  if (NOT_ROUTABLE.check(address, family)) return 'not-routable';
  return 'public';
}

/** Whether the policy lets a request reach an address of this class. */
export function addressAllowed(kind: AddressClass, policy: WebhookUrlPolicy): boolean {
  return kind === 'public' || (kind === 'loopback' && policy.allowLoopback);
}

/** `localhost` and its subdomains resolve to loopback by definition (RFC 6761), whatever DNS says. */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** The URL's host without IPv6 brackets and a trailing dot. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

/**
 * At creation and PATCH: the URL's form and its host as written (an IP literal or `localhost`).
 * A name is resolved only at delivery, where the answer counts; a name that resolves to a refused
 * address now is refused then, on every attempt. Throws 400 webhook-url-not-allowed.
 */
export function checkWebhookUrl(raw: string, policy: WebhookUrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw problems.webhookUrlNotAllowed('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw problems.webhookUrlNotAllowed('must be an https URL');
  if (url.username !== '' || url.password !== '') throw problems.webhookUrlNotAllowed('must not carry credentials');
  const host = hostOf(url);
  const literal = isIP(host) !== 0 ? classifyAddress(host) : isLocalhostName(host) ? 'loopback' : null;
  if (literal !== null && !addressAllowed(literal, policy)) throw problems.webhookUrlNotAllowed(`names a ${literal} address`);
  // Plain http only in development, or to a local receiver where loopback is allowed (the test stack).
  if (url.protocol === 'http:' && !policy.allowHttp && literal !== 'loopback') throw problems.webhookUrlNotAllowed('must be an https URL');
  return url;
}

/** Thrown by the delivery's lookup when the host resolves to a refused address. */
export class WebhookAddressRefused extends Error {
  override name = 'WebhookAddressRefused';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` of the delivery's request (node:http): resolves the host, refuses it when ANY of its
 * addresses is refused (a name with one public and one private address would otherwise be a coin
 * toss), and hands the socket the checked addresses only, so the address connected to is one that
 * was checked.
 */
export function webhookLookup(policy: WebhookUrlPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    if (isLocalhostName(host.replace(/\.$/, '')) && !policy.allowLoopback) {
      callback(new WebhookAddressRefused(`${hostname} is a loopback name`), []);
      return;
    }
    dnsLookup(host, { all: true, family: typeof options.family === 'number' ? options.family : 0 }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find(({ address }) => !addressAllowed(classifyAddress(address), policy));
      if (refused) return callback(new WebhookAddressRefused(`${hostname} resolves to a ${classifyAddress(refused.address)} address`), []);
      if (addresses.length === 0) return callback(new WebhookAddressRefused(`${hostname} resolves to no address`), []);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
