import { isIP } from 'node:net';
import Joi from 'joi';
import proxyaddr from 'proxy-addr';
import { nodeEnv } from './runtime';
import { setting } from './setting';

/** proxy-addr's names for the loopback, link-local and private ranges (IPv4 and IPv6). */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

const proxyList = (value: string): string[] => value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');

/**
 * A TRUSTED_PROXIES entry is compiled here as the gateway will compile it (api/http/client-ip.ts), so
 * a typo stops the start-up instead of trusting the wrong proxy. Its address must also be one Node
 * itself reads: proxy-addr alone would take `10` or `0x0a000001` as 0.0.0.10 and 10.0.0.1.
 */
function isProxyEntry(entry: string): boolean {
  if (!PROXY_RANGE_NAMES.includes(entry) && isIP(entry.split('/')[0]) === 0) return false;
  try {
    proxyaddr.compile(entry);
    return true;
  } catch {
    return false;
  }
}

const trustedProxyList: Joi.CustomValidator<string> = (value, helpers) => {
  const malformed = proxyList(value).find((entry) => !isProxyEntry(entry));
  return malformed === undefined ? value : helpers.error('proxies.invalid', { entry: malformed });
};

/** The gateway: where it listens, what it accepts, and the limits of docs/reference/gateway.md it enforces per caller. */
export const gatewaySettings = {
  api: {
    host: setting('API_HOST', Joi.string().hostname().default('127.0.0.1')),
    port: setting('API_PORT', Joi.number().port().default(8080)),
    grpcPort: setting('GRPC_PORT', Joi.number().port().default(50051)),
    problemBase: setting('PROBLEM_BASE', Joi.string().uri({ scheme: ['http', 'https'] }).default('https://problems.platform.local'),
      (base) => base.replace(/\/+$/, '')),
    downstreamTimeoutMs: setting('GRPC_CALL_TIMEOUT_MS', Joi.number().integer().min(100).max(60_000).default(5000)),
    /** auto: responses are validated everywhere but in production. */
    validateResponses: setting('RESPONSE_VALIDATION', Joi.string().valid('auto', 'on', 'off').default('auto'),
      (mode, lookup) => mode === 'on' || (mode === 'auto' && ['development', 'staging', 'test'].includes(lookup(nodeEnv)))),
    bodyLimitBytes: setting('API_BODY_LIMIT_BYTES', Joi.number().integer().min(1024).max(100 * 1024 * 1024).default(1024 * 1024)),
    shutdownTimeoutMs: setting('SHUTDOWN_TIMEOUT_MS', Joi.number().integer().min(0).max(120_000).default(10_000)),
    /** How many verified access tokens the gateway remembers (api/runtime/verified-tokens.ts). */
    verifiedTokenCacheSize: setting('API_VERIFIED_TOKEN_CACHE_SIZE', Joi.number().integer().min(1).default(10_000)),
    /**
     * The proxies (load balancers) whose X-Forwarded-For names the client (api/http/client-ip.ts); empty:
     * none, the client is the socket's peer. Addresses, CIDR ranges and proxy-addr's names.
     */
    trustedProxies: setting('TRUSTED_PROXIES', Joi.string().allow('').default('').custom(trustedProxyList).messages({
      'proxies.invalid': `{{#label}} entry "{{#entry}}" is not an IP address, a CIDR range or one of ${PROXY_RANGE_NAMES.join(', ')}`,
    }), proxyList),
  },
  featureFlags: { refreshMs: setting('FEATURE_FLAGS_REFRESH_MS', Joi.number().integer().min(100).max(3_600_000).default(30_000)) },
  /** Requests per window per group key (docs/reference/gateway.md#rule-10); the admin roles get adminLimit. */
  rateLimit: {
    limit: setting('RATE_LIMIT_PER_MINUTE', Joi.number().integer().min(1).default(1000)),
    adminLimit: setting('RATE_LIMIT_ADMIN_PER_MINUTE', Joi.number().integer().min(1).default(5000)),
    windowMs: setting('RATE_LIMIT_WINDOW_MS', Joi.number().integer().min(1000).default(60_000)),
  },
};
