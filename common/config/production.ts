import { existsSync } from 'node:fs';
import type { billingSettings } from './billing';
import type { dbSettings } from './db';
import { LOCAL_KAFKA_SASL, type eventsSettings } from './events';
import type { filesSettings } from './files';
import type { gatewaySettings } from './gateway';
import type { identitySettings } from './identity';
import { ConfigError, type Resolved } from './setting';

/** The members the rules read, typed from their parts: common/config/index.ts composes the whole and calls this module. */
type Config = Resolved<typeof dbSettings & typeof eventsSettings & typeof filesSettings & typeof billingSettings & typeof identitySettings
  & typeof gatewaySettings>;

/** The environment a configuration was loaded from: tells a variable that was set from one defaulted. */
type Environment = Readonly<Record<string, string | undefined>>;

/**
 * A value production refuses although the rules of its variable accept it: fine on a laptop, unsafe
 * on a server. `refuses` sees the loaded configuration, the development one (every default, which
 * .env.example repeats) and the environment.
 */
interface ProductionRule {
  variable: string;
  /** Completes "VARIABLE: ..." in the refusal. */
  because: string;
  refuses(config: Config, development: Config, env: Environment): boolean;
}

/** The password of a PostgreSQL URL ('' when it has none: the server may authenticate otherwise). */
const passwordOf = (url: string): string => decodeURIComponent(new URL(url).password);

/** The passwords of the development roles (infra/postgres/init.sql), whichever URL carries them. */
const developmentPasswords = (development: Config): string[] =>
  [development.db.url, development.db.ownerUrl, development.db.analyticsUrl].map(passwordOf);

const publicPassword = (variable: string, url: (config: Config) => string): ProductionRule => ({
  variable,
  because: 'carries the password of a development role (infra/postgres/init.sql); give the role its own',
  refuses: (config, development) => developmentPasswords(development).includes(passwordOf(url(config))),
});

/** A secret whose default is public (it is in .env.example): production must set its own. */
const publicDefault = (variable: string, value: (config: Config) => unknown): ProductionRule => ({
  variable,
  because: 'is the public development value (.env.example); set this deployment\'s own',
  refuses: (config, development) => value(config) === value(development),
});

/**
 * A key given either in the environment or in a key file. Without either, each process would
 * generate its own file under PLATFORM_DATA on its first start (common/key-file.ts): gateways and
 * workers on different machines would then hold different keys. A named file must exist, for the
 * same reason: production provisions its keys, it does not generate them.
 */
const provisionedKey = (keyVariable: string, fileVariable: string): ProductionRule[] => [
  {
    variable: keyVariable,
    because: `is unset and so is ${fileVariable}: every process would generate a key of its own under PLATFORM_DATA`,
    refuses: (_config, _development, env) => env[keyVariable] === undefined && env[fileVariable] === undefined,
  },
  {
    variable: fileVariable,
    because: 'names a file that does not exist: production does not generate keys, it is given them',
    refuses: (_config, _development, env) => env[keyVariable] === undefined && env[fileVariable] !== undefined && !existsSync(env[fileVariable]),
  },
];

/**
 * What `NODE_ENV=production` refuses (docs/decisions/platform.md, Production mode): public development
 * secrets, keys a process would generate for itself, and switches meant for development. TLS settings
 * that contradict each other (verify-full without a CA file, a CA file of a plain connection) are
 * refused in every environment by the rules of their variables (common/config/db.ts, files.ts,
 * events.ts, temporal.ts). TLS itself is not required: a deployment on a private network may do
 * without it; only a password sent in clear (SASL PLAIN without TLS) is refused.
 */
export const productionRules: readonly ProductionRule[] = [
  publicPassword('DATABASE_URL', (config) => config.db.url),
  publicPassword('DATABASE_OWNER_URL', (config) => config.db.ownerUrl),
  publicPassword('ANALYTICS_DATABASE_URL', (config) => config.db.analyticsUrl),
  publicDefault('S3_ACCESS_KEY', (config) => config.s3.accessKey),
  publicDefault('S3_SECRET_KEY', (config) => config.s3.secretKey),
  publicDefault('BILLING_STRIPE_WEBHOOK_SECRET', (config) => config.billing.stripeWebhookSecret),
  publicDefault('BILLING_PADDLE_WEBHOOK_SECRET', (config) => config.billing.paddleWebhookSecret),
  publicDefault('MFA_ENCRYPTION_KEY', (config) => config.identity.mfa.encryptionKey),
  publicDefault('PASSWORD_PEPPER', (config) => config.identity.passwordPepper),
  {
    variable: 'KAFKA_SASL_PASSWORD',
    because: 'is the password of the local broker\'s SCRAM user (scripts/infra/services/kafka.sh); give the deployment\'s user its own',
    refuses: (config) => config.kafka.sasl.password === LOCAL_KAFKA_SASL.password,
  },
  {
    variable: 'KAFKA_SASL_MECHANISM',
    because: 'is plain without KAFKA_SSL: every connection would carry the password in clear (scram-sha-256/512 never send it)',
    refuses: (config) => config.kafka.sasl.mechanism === 'plain' && !config.kafka.ssl,
  },
  ...provisionedKey('JWT_PRIVATE_KEY', 'JWT_KEY_FILE'),
  ...provisionedKey('TEMPORAL_PAYLOAD_KEY', 'TEMPORAL_PAYLOAD_KEY_FILE'),
  {
    variable: 'RESPONSE_VALIDATION',
    because: 'is on: checking every response against its schema (500 when one differs) is for development, test and staging',
    refuses: (config) => config.api.validateResponses,
  },
  {
    variable: 'WEBHOOKS_ALLOW_LOOPBACK',
    because: 'is true: webhooks to the servers\' own loopback address are for a local receiver in development and tests',
    refuses: (config) => config.webhooks.allowLoopback,
  },
  {
    variable: 'AUTH_PROVIDERS',
    because: 'names an http:// issuer or redirect URI: plain http is for the local issuers of the tests',
    refuses: (config) => config.identity.providers.list.some((provider) =>
      [provider.issuer, provider.redirectUri].some((url) => new URL(url).protocol !== 'https:')),
  },
];

/** Throws one ConfigError naming every variable production refuses, each on its own line (as joi's report). */
export function refuseInProduction(config: Config, development: Config, env: Environment, rules = productionRules): void {
  const refused = rules.filter((rule) => rule.refuses(config, development, env));
  if (refused.length === 0) return;
  const lines = refused.map((rule) => `  ${rule.variable}: ${rule.because}`);
  throw new ConfigError(`Refusing to start with NODE_ENV=production:\n${lines.join('\n')}`);
}
