import { clientIpOf, compileProxyTrust } from '../../../api/http/client-ip';
import { ConfigError, loadConfig } from '../../../common/config';

/**
 * The client address of a request (api/http/client-ip.ts): X-Forwarded-For read from the right,
 * believed only while the hop at hand is one of TRUSTED_PROXIES. Each row: peer (the socket's
 * address), X-Forwarded-For, TRUSTED_PROXIES, the client address decided.
 */
const CLIENT = '203.0.113.7';

const rows: [string, string | undefined, string | undefined, string, string][] = [
  // No trusted proxy: the header is never read, whatever it says.
  ['a direct connection', '198.51.100.4', undefined, '', '198.51.100.4'],
  ['a spoofed header, nobody trusted', '198.51.100.4', '1.2.3.4', '', '198.51.100.4'],
  ['a spoofed header from loopback, nobody trusted', '127.0.0.1', CLIENT, '', '127.0.0.1'],
  ['an IPv4-mapped peer keeps its form', '::ffff:127.0.0.1', CLIENT, '', '::ffff:127.0.0.1'],
  ['an IPv6 peer', '2001:db8::1', CLIENT, '', '2001:db8::1'],
  // A peer that is not a trusted proxy: its header is not believed either.
  ['a spoofed header from an untrusted peer', '198.51.100.4', CLIENT, '127.0.0.1', '198.51.100.4'],
  ['an untrusted IPv4-mapped peer keeps its form', '::ffff:198.51.100.4', CLIENT, '127.0.0.1', '::ffff:198.51.100.4'],
  // One trusted proxy.
  ['the proxy without a header', '127.0.0.1', undefined, '127.0.0.1', '127.0.0.1'],
  ['the proxy with an empty header', '127.0.0.1', '', '127.0.0.1', '127.0.0.1'],
  ['the client the proxy names', '127.0.0.1', CLIENT, '127.0.0.1', CLIENT],
  ['a spoofed entry left of what the proxy appended', '127.0.0.1', `6.6.6.6, ${CLIENT}`, '127.0.0.1', CLIENT],
  ['the proxy as an IPv4-mapped peer', '::ffff:127.0.0.1', CLIENT, '127.0.0.1', CLIENT],
  ['an IPv6 proxy and client', '::1', '2001:db8::7', '::1', '2001:db8::7'],
  // Chains of proxies, ranges and proxy-addr's names.
  ['two trusted proxies', '10.0.0.2', `${CLIENT}, 10.0.0.1`, '10.0.0.1, 10.0.0.2', CLIENT],
  ['an untrusted proxy in the chain is the client', '10.0.0.1', `${CLIENT}, 198.51.100.9`, '10.0.0.1', '198.51.100.9'],
  ['a CIDR range', '10.1.2.3', `6.6.6.6, ${CLIENT}, 10.9.9.9`, '10.0.0.0/8', CLIENT],
  ['a peer just outside the range', '11.0.0.1', CLIENT, '10.0.0.0/8', '11.0.0.1'],
  ['every hop trusted: the furthest one', '10.0.0.1', '10.0.0.3, 10.0.0.2', '10.0.0.0/8', '10.0.0.3'],
  ['the names loopback and uniquelocal', '127.0.0.1', `${CLIENT}, 192.168.1.10, 172.16.0.4`, 'loopback, uniquelocal', CLIENT],
  ['an IPv6 range', 'fd00::2', `${CLIENT}, fd00::1`, 'fd00::/8', CLIENT],
  // Entries that are not addresses end the walk at the proxy that wrote them.
  ['a malformed header', '127.0.0.1', 'not an address', '127.0.0.1', '127.0.0.1'],
  ['the word unknown', '127.0.0.1', 'unknown', '127.0.0.1', '127.0.0.1'],
  ['an address with a port', '127.0.0.1', `${CLIENT}:51234`, '127.0.0.1', '127.0.0.1'],
  ['a malformed entry inside a chain', '10.0.0.1', `${CLIENT}, <script>, 10.0.0.2`, '10.0.0.0/8', '10.0.0.2'],
  ['empty entries and spaces', '127.0.0.1', ` , ${CLIENT} ,,`, '127.0.0.1', CLIENT],
  // A socket already closed has no address; Koa's ctx.ip is then '' too.
  ['no peer address', undefined, CLIENT, '127.0.0.1', ''],
];

const proxyList = (list: string) => list.split(',').map((entry) => entry.trim()).filter(Boolean);

describe('clientIpOf', () => {
  it.each(rows)('%s: peer %s, X-Forwarded-For %s, trusted [%s] → %s', (_case, peer, forwardedFor, trusted, expected) => {
    expect(clientIpOf(peer, forwardedFor, compileProxyTrust(proxyList(trusted)))).toBe(expected);
  });
});

describe('TRUSTED_PROXIES', () => {
  it('is empty by default: no proxy is trusted', () => {
    expect(loadConfig({}).api.trustedProxies).toEqual([]);
    expect(compileProxyTrust([])).toBeNull();
  });

  it('reads a comma-separated list of addresses, ranges and names', () => {
    expect(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8, 192.0.2.1 ,loopback,linklocal, uniquelocal,::1,fd00::/8,' }).api.trustedProxies)
      .toEqual(['10.0.0.0/8', '192.0.2.1', 'loopback', 'linklocal', 'uniquelocal', '::1', 'fd00::/8']);
  });

  it.each([
    ['10.0.0.0/33'], ['10.0.0'], ['localhost'], ['10.0.0.1:80'], ['0x0a000001'], ['0.0.0.0/0'], ['10.0.0.0/x'],
  ])('refuses %s at start-up, naming the entry', (entry) => {
    const load = () => loadConfig({ TRUSTED_PROXIES: `127.0.0.1, ${entry}` });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`TRUSTED_PROXIES: "TRUSTED_PROXIES" entry "${entry}" is not an IP address, a CIDR range `
      + 'or one of loopback, linklocal, uniquelocal');
  });
});
