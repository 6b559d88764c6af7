import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyaddr from 'proxy-addr';

/**
 * Whether the gateway believes what an address says about the request's way in: hop 0 is the
 * socket's peer, hop 1 the address that peer appended last to X-Forwarded-For, and so on.
 */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * TRUSTED_PROXIES compiled once (common/config/gateway.ts has already refused malformed entries);
 * null when the list is empty: the gateway then trusts no proxy.
 */
export function compileProxyTrust(proxies: readonly string[]): ProxyTrust | null {
  return proxies.length === 0 ? null : proxyaddr.compile([...proxies]);
}

/**
 * The client's address (docs/decisions/gateway.md, Client address behind a load balancer). Each proxy
 * appends the address it received the request from, so X-Forwarded-For is read from the right: while
 * the address at hand is a trusted proxy, the entry it wrote is believed, and the first address that is
 * not a trusted proxy is the client. Entries further left were written by the client itself or by a
 * proxy we do not know, so they are never read. With no trusted proxy, or a peer that is not one, the
 * header is ignored and the client is the socket's peer in the form Node gives it (`::ffff:10.0.0.1`
 * on a dual-stack socket), as ctx.ip always was.
 *
 * An entry that is not an IP address (`unknown`, `10.0.0.1:443`, garbage) ends the walk: the client
 * is then the trusted proxy that wrote it, the last address known, rather than a string that would be
 * stored as actorIp and used as a rate-limit key.
 */
export function clientIpOf(peer: string | undefined, forwardedFor: string | undefined, trust: ProxyTrust | null): string {
  if (!peer || !trust || !trust(peer, 0)) return peer ?? '';
  // proxy-addr reads only these two parts of a request: the socket's address and the header.
  const request = { socket: { remoteAddress: peer }, headers: { 'x-forwarded-for': forwardedFor } } as unknown as IncomingMessage;
  // From the peer leftwards through the header, up to and including the first untrusted address.
  const path = proxyaddr.all(request, trust);
  const client = path[path.length - 1];
  return isIP(client) !== 0 ? client : (path.at(-2) ?? peer);
}
