import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Joi from 'joi';
import { repoRoot } from './paths';
import { taskQueues } from './temporal/task-queues';

/** The public development key of MFA_ENCRYPTION_KEY (also in .env.example); production must set another. */
const DEV_MFA_ENCRYPTION_KEY = 'ZGV2LW9ubHktbWZhLWtleS1uZXZlci1pbi1wcm9kLTE=';

/**
 * One external sign-in provider (OpenID Connect, authorization code with PKCE). The endpoints come
 * from the issuer's discovery document, so only what the provider registered for us is configured.
 */
export interface AuthProviderSettings {
  /** The :providerId of the routes and of stored links. */
  id: string;
  /** Shown on the login page. */
  name: string;
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** Where the provider sends the browser back with code and state (the login page's callback). */
  redirectUri: string;
  scopes: string[];
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
}

const authProvider = Joi.object({
  id: Joi.string().pattern(/^[a-z0-9][a-z0-9_-]{0,39}$/).required(),
  name: Joi.string().trim().min(1).max(100).required(),
  // http is accepted for local issuers (tests start one); production issuers are https.
  issuer: Joi.string().uri({ scheme: ['https', 'http'] }).required(),
  clientId: Joi.string().min(1).max(500).required(),
  clientSecret: Joi.string().min(1).max(2000),
  redirectUri: Joi.string().uri({ scheme: ['https', 'http'] }).required(),
  // Scope tokens of RFC 6749 3.3; openid is what makes it OpenID Connect.
  scopes: Joi.array().items(Joi.string().pattern(/^[\x21\x23-\x5B\x5D-\x7E]+$/)).has(Joi.string().valid('openid'))
    .default(['openid', 'email', 'profile']),
  tokenEndpointAuthMethod: Joi.string().valid('client_secret_basic', 'client_secret_post', 'none')
    .default((provider: { clientSecret?: string }) => (provider.clientSecret ? 'client_secret_basic' : 'none')),
}).custom((provider: AuthProviderSettings, helpers) => (
  provider.tokenEndpointAuthMethod !== 'none' && !provider.clientSecret
    ? helpers.error('any.invalid', { message: `${provider.tokenEndpointAuthMethod} needs a clientSecret` })
    : provider)).messages({ 'any.invalid': 'provider {{#value.id}}: {{#message}}' });

/** AUTH_PROVIDERS is a JSON array of providers (empty: password sign-in only). Joi reports what is thrown. */
function parseAuthProviders(text: string): AuthProviderSettings[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('it is not JSON');
  }
  const { value, error } = Joi.array().items(authProvider).unique('id').validate(parsed, { abortEarly: false });
  if (error) throw new Error(error.message);
  return value;
}

/**
 * The one place that reads process.env. Values are validated once at start-up and frozen, so a
 * bad value stops the process with a message naming the variable instead of failing later.
 */
const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'test', 'staging', 'production').default('development'),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  SERVICE_VERSION: Joi.string().default('0.1.0'),

  API_HOST: Joi.string().hostname().default('127.0.0.1'),
  API_PORT: Joi.number().port().default(8080),
  GRPC_PORT: Joi.number().port().default(50051),
  PROBLEM_BASE: Joi.string().uri({ scheme: ['http', 'https'] }).default('https://problems.platform.local'),
  GRPC_CALL_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(5000),
  RESPONSE_VALIDATION: Joi.string().valid('auto', 'on', 'off').default('auto'),
  API_BODY_LIMIT_BYTES: Joi.number().integer().min(1024).max(100 * 1024 * 1024).default(1024 * 1024),
  API_VERIFIED_TOKEN_CACHE_SIZE: Joi.number().integer().min(1).default(10_000),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(0).max(120_000).default(10_000),
  HEALTH_CHECK_TIMEOUT_MS: Joi.number().integer().min(100).max(30_000).default(2000),
  LIVE_MAX_EVENT_LOOP_DELAY_MS: Joi.number().integer().min(100).max(60_000).default(3000),
  FEATURE_FLAGS_REFRESH_MS: Joi.number().integer().min(100).max(3_600_000).default(30_000),

  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://platform_app:platform_app@127.0.0.1:5432/platform'),
  DATABASE_OWNER_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://platform_owner:platform_owner@127.0.0.1:5432/platform'),
  DATABASE_POOL_SIZE: Joi.number().integer().min(1).max(200).default(10),
  ANALYTICS_DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://platform_app:platform_app@127.0.0.1:5432/platform'),

  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379/0'),
  RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(1).default(1000),
  RATE_LIMIT_ADMIN_PER_MINUTE: Joi.number().integer().min(1).default(5000),
  RATE_LIMIT_WINDOW_MS: Joi.number().integer().min(1000).default(60_000),
  GET_RETRY_DELAY_MS: Joi.number().integer().min(0).default(100),
  TENANT_BREAKER_ERROR_RATE: Joi.number().min(0).max(1).default(0.5),
  TENANT_BREAKER_WINDOW_MS: Joi.number().integer().min(1000).default(60_000),
  TENANT_BREAKER_MIN_REQUESTS: Joi.number().integer().min(1).default(20),
  TENANT_BREAKER_OPEN_MS: Joi.number().integer().min(1000).default(30_000),
  RBAC_MAX_ROLES_PER_USER: Joi.number().integer().min(1).default(50),
  RBAC_MAX_PERMISSIONS_PER_ROLE: Joi.number().integer().min(1).default(1000),
  RBAC_MAX_ROLES_PER_TENANT: Joi.number().integer().min(3).default(500),
  RBAC_CACHE_TTL_MS: Joi.number().integer().min(0).max(3_600_000).default(30_000),
  RBAC_CACHE_MAX_ENTRIES: Joi.number().integer().min(1).default(100_000),
  MODULES_DIR: Joi.string().default(join(repoRoot, 'modules')),
  MODULE_CACHE_TTL_MS: Joi.number().integer().min(0).max(600_000).default(5_000),
  MODULE_CACHE_MAX_TENANTS: Joi.number().integer().min(1).default(100_000),

  KAFKA_BROKERS: Joi.string().pattern(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/).default('127.0.0.1:9092'),
  KAFKA_CLIENT_ID: Joi.string().default('platform'),
  BROKER_RETENTION_HOURS: Joi.number().integer().min(1).default(168),
  BROKER_AUDIT_RETENTION_HOURS: Joi.number().integer().min(1).default(720),
  BROKER_PARTITIONS: Joi.number().integer().min(1).max(128).default(6),

  TEMPORAL_ADDRESS: Joi.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: Joi.string().default('default'),
  TEMPORAL_UI_URL: Joi.string().uri().default('http://127.0.0.1:8233'),
  // The time-skipping test server the workflow tests start (a wrapper the bring-up scripts build).
  TEMPORAL_TEST_SERVER_PATH: Joi.string().default(join(homedir(), '.cache/platform/bin/temporal-test-server')),
  // 32 bytes in base64: encrypts every Temporal payload (AES-256-GCM). Without it the key file is used.
  TEMPORAL_PAYLOAD_KEY: Joi.string().base64().custom((value: string, helpers) => (Buffer.from(value, 'base64').length === 32 ? value : helpers.error('any.invalid'))),
  // Comma-separated base64 keys that still decrypt payloads sealed before a rotation.
  TEMPORAL_PAYLOAD_PREVIOUS_KEYS: Joi.string().pattern(/^[A-Za-z0-9+/=]+(,[A-Za-z0-9+/=]+)*$/),
  // Default: $PLATFORM_DATA/temporal/payload-keys.json, generated once when missing.
  TEMPORAL_PAYLOAD_KEY_FILE: Joi.string(),

  S3_ENDPOINT: Joi.string().default('127.0.0.1'),
  S3_PORT: Joi.number().port().default(9000),
  S3_USE_SSL: Joi.boolean().default(false),
  S3_ACCESS_KEY: Joi.string().default('platform'),
  S3_SECRET_KEY: Joi.string().default('platform-secret'),
  S3_BUCKET: Joi.string().pattern(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).default('platform'),
  S3_REGION: Joi.string().default('us-east-1'),

  CLAMAV_HOST: Joi.string().default('127.0.0.1'),
  CLAMAV_PORT: Joi.number().port().default(3310),

  SMTP_HOST: Joi.string().default('127.0.0.1'),
  SMTP_PORT: Joi.number().port().default(1025),
  MAIL_FROM: Joi.string().default('Platform <no-reply@platform.local>'),
  MAILPIT_API_URL: Joi.string().uri().default('http://127.0.0.1:8025'),
  // The web application the links in e-mails open (they carry token=<value> in the query).
  APP_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('http://127.0.0.1:3000'),
  // The task queue the gateway starts mail workflows on (tests point it at a queue of their own).
  NOTIFY_TASK_QUEUE: Joi.string().default(taskQueues.notify),

  OUTBOX_BATCH_SIZE: Joi.number().integer().min(1).max(5000).default(500),
  OUTBOX_IDLE_POLL_MS: Joi.number().integer().min(10).max(60_000).default(1000),
  OUTBOX_LINGER_MS: Joi.number().integer().min(0).max(1000).default(100),
  OUTBOX_BACKOFF_INITIAL_MS: Joi.number().integer().min(10).max(60_000).default(250),
  OUTBOX_BACKOFF_MAX_MS: Joi.number().integer().min(10).max(600_000).default(30_000),
  OUTBOX_STATUS_INTERVAL_MS: Joi.number().integer().min(100).max(3_600_000).default(30_000),
  OUTBOX_RETENTION_HOURS: Joi.number().integer().min(1).default(168),

  AUDIT_CONSUMER_GROUP: Joi.string().default('audit.store'),
  AUDIT_CONSUMER_CHUNK_SIZE: Joi.number().integer().min(1).max(10_000).default(1000),
  AUDIT_CONSUMER_CONCURRENCY: Joi.number().integer().min(1).max(64).default(3),
  AUDIT_PUBLISH_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(2000),
  AUDIT_KAFKA_RETRY_MS: Joi.number().integer().min(0).max(600_000).default(5000),
  AUDIT_FALLBACK_REPLAY_INTERVAL_MS: Joi.number().integer().min(100).max(3_600_000).default(30_000),
  AUDIT_FALLBACK_BATCH_SIZE: Joi.number().integer().min(1).max(5000).default(500),
  AUDIT_FALLBACK_RETENTION_DAYS: Joi.number().integer().min(1).default(7),
  AUDIT_STATUS_INTERVAL_MS: Joi.number().integer().min(100).max(3_600_000).default(30_000),
  AUDIT_INTAKE_TOPIC: Joi.string().pattern(/^[A-Za-z0-9._-]+$/).default('platform.audit.events'),
  AUDIT_ANONYMIZE_LOCK_SECONDS: Joi.number().integer().min(1).max(3600).default(60),
  AUDIT_ANONYMIZE_POLL_MS: Joi.number().integer().min(10).max(10_000).default(100),
  AUDIT_REQUEST_ENABLED: Joi.boolean().default(true),
  AUDIT_REQUEST_FLUSH_MS: Joi.number().integer().min(1).max(10_000).default(100),
  AUDIT_ANONYMIZE_WAIT_MS: Joi.number().integer().min(0).max(60_000).default(5000),
  AUDIT_HOT_DAYS: Joi.number().integer().min(1).max(3650).default(90),
  AUDIT_COLD_YEARS: Joi.number().integer().min(1).max(100).default(7),
  AUDIT_RETENTION_INTERVAL_HOURS: Joi.number().integer().min(1).max(24 * 31).default(24),
  AUDIT_EXPORT_RETENTION_DAYS: Joi.number().integer().min(1).max(365).default(7),
  AUDIT_EXPORT_URL_TTL_SECONDS: Joi.number().integer().min(1).max(86_400).default(300),
  AUDIT_TASK_QUEUE: Joi.string().default('platform.audit'),

  IDEMPOTENCY_KEY_TTL_HOURS: Joi.number().integer().min(1).default(24),
  MONEY_REVERSAL_MAX_AGE_DAYS: Joi.number().integer().min(1).max(3650).default(365),
  MONEY_PLAN_LIMITS_CACHE_SECONDS: Joi.number().integer().min(0).max(86_400).default(300),
  MAINTENANCE_INTERVAL_MINUTES: Joi.number().integer().min(1).default(15),
  MAINTENANCE_BATCH_SIZE: Joi.number().integer().min(1).max(50_000).default(5000),
  // Billing, part 2: limit enforcement at the gateway, plan-info cache (document 1: 15 minutes),
  // the pace of a tenant termination (each of its two deleting phases takes at least this long,
  // so the whole runs 24 to 48 hours) and its batch size.
  BILLING_ENABLED: Joi.boolean().default(true),
  BILLING_CACHE_TTL: Joi.number().integer().min(0).max(86_400).default(900),
  BILLING_TERMINATION_PHASE_HOURS: Joi.number().min(0).max(24).default(12),
  BILLING_TERMINATION_BATCH_SIZE: Joi.number().integer().min(1).max(10_000).default(500),

  BILLING_STRIPE_WEBHOOK_SECRET: Joi.string().default('whsec_local_stripe_secret'),
  BILLING_PADDLE_WEBHOOK_SECRET: Joi.string().default('pdl_local_paddle_secret'),
  BILLING_TRIAL_DAYS: Joi.number().integer().min(0).max(365).default(14),
  // The subscription lifecycle (document 1, States and transitions). Days count from the event named.
  BILLING_TASK_QUEUE: Joi.string().default(taskQueues.billing),
  BILLING_TRIAL_NOTICE_DAYS: Joi.number().min(0).max(365).default(3),
  BILLING_SUSPEND_AFTER_DAYS: Joi.number().min(0).max(365).default(7),
  BILLING_TERMINATE_AFTER_DAYS: Joi.number().min(1).max(3650).default(38),
  // Dunning e-mails, in days after the subscription went past_due; at least 5 before termination.
  BILLING_DUNNING_NOTICE_DAYS: Joi.string().pattern(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/).default('0,3,7,14,30,37'),
  BILLING_DOWNGRADE_GRACE_DAYS: Joi.number().min(0).max(365).default(30),
  BILLING_WEBHOOK_TOLERANCE_SECONDS: Joi.number().integer().min(1).max(86_400).default(300),
  BILLING_WEBHOOK_REDELIVERY_INTERVAL_SEC: Joi.number().integer().min(1).max(3600).default(60),
  BILLING_WEBHOOK_DISPATCH_CONCURRENCY: Joi.number().integer().min(1).max(256).default(8),
  BILLING_WEBHOOK_DISPATCH_QUEUE: Joi.number().integer().min(0).max(1_000_000).default(10_000),

  // State kept outside the work tree (the bring-up scripts use the same folder).
  PLATFORM_DATA: Joi.string().default(join(homedir(), '.cache/platform/data')),
  JWT_ISSUER: Joi.string().uri().default('http://127.0.0.1:8080'),
  JWT_AUDIENCE: Joi.string().default('platform-api'),
  // The signing key as a PKCS#8 PEM or a private JWK (JSON); without it the key file is used.
  JWT_PRIVATE_KEY: Joi.string(),
  // Public JWKs (a JSON JWK set) of retired signing keys that still verify during a rotation.
  JWT_PREVIOUS_PUBLIC_KEYS: Joi.string(),
  // Default: $PLATFORM_DATA/jwt/signing-keys.json, generated once when missing.
  JWT_KEY_FILE: Joi.string(),
  ACCESS_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(900),
  REFRESH_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(7 * 24 * 3600),
  REFRESH_GRACE_SECONDS: Joi.number().min(0).max(300).default(10),
  SESSION_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(300),
  IMPERSONATION_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(3600),
  LOGIN_THROTTLE_WINDOW_SECONDS: Joi.number().integer().min(1).default(900),
  LOGIN_THROTTLE_ACCOUNT_ATTEMPTS: Joi.number().integer().min(1).default(10),
  LOGIN_THROTTLE_IP_ATTEMPTS: Joi.number().integer().min(1).default(50),
  LOGIN_THROTTLE_MAX_DELAY_SECONDS: Joi.number().integer().min(1).default(900),
  AUTH_PROVIDERS: Joi.string().empty('').custom(parseAuthProviders).default([]),
  AUTH_PROVIDER_STATE_TTL_SECONDS: Joi.number().integer().min(30).max(3600).default(600),
  AUTH_PROVIDER_HTTP_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(5000),
  AUTH_PROVIDER_DISCOVERY_TTL_SECONDS: Joi.number().integer().min(0).max(86_400).default(3600),
  // 32 bytes in base64: seals TOTP secrets (AES-256-GCM) and keys recovery-code hashes. The development
  // default is public, so production must set its own.
  MFA_ENCRYPTION_KEY: Joi.string().base64().when('NODE_ENV', {
    is: 'production', then: Joi.required().invalid(DEV_MFA_ENCRYPTION_KEY), otherwise: Joi.optional().default(DEV_MFA_ENCRYPTION_KEY),
  }).custom((value: string, helpers) => (Buffer.from(value, 'base64').length === 32 ? value : helpers.error('any.invalid'))),
  MFA_ISSUER: Joi.string().max(100).default('Platform'),
  RECOVERY_MAX_ATTEMPTS: Joi.number().integer().min(1).default(5),
  RECOVERY_WINDOW_SECONDS: Joi.number().integer().min(1).default(900),
  RECOVERY_LOCK_SECONDS: Joi.number().integer().min(1).default(3600),
  RECOVERY_ACCOUNT_LOCK_FAILURES: Joi.number().integer().min(1).default(15),
  VERIFY_EMAIL_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(24 * 3600),
  RESET_PASSWORD_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(3600),
  INVITE_TOKEN_TTL_SECONDS: Joi.number().integer().min(1).default(72 * 3600),
  VERIFY_EMAIL_REQUEST_LIMIT: Joi.number().integer().min(1).default(3),
  VERIFY_EMAIL_REQUEST_WINDOW_SECONDS: Joi.number().integer().min(1).default(3600),

  MONEY_TASK_QUEUE: Joi.string().default(taskQueues.money),
  MONEY_HOLD_TTL_HOURS: Joi.number().integer().min(1).max(168).default(72),
  MONEY_MAX_HOLDS_PER_WALLET: Joi.number().integer().min(1).default(100),
  MONEY_HOLD_CLEANUP_INTERVAL_SEC: Joi.number().integer().min(1).default(60),
}).unknown(true);

export interface Config {
  env: 'development' | 'test' | 'staging' | 'production';
  logLevel: string;
  version: string;
  api: {
    host: string; port: number; grpcPort: number; problemBase: string; downstreamTimeoutMs: number; validateResponses: boolean;
    bodyLimitBytes: number; shutdownTimeoutMs: number;
    /** How many verified access tokens the gateway remembers (api/access/verified-tokens.ts). */
    verifiedTokenCacheSize: number;
  };
  /** analyticsUrl: the read-only reporting connection (audit queries, usage history). */
  db: { url: string; ownerUrl: string; poolSize: number; analyticsUrl: string };
  health: { checkTimeoutMs: number; maxEventLoopDelayMs: number };
  featureFlags: { refreshMs: number };
  redis: { url: string };
  kafka: { brokers: string[]; clientId: string; retentionHours: number; auditRetentionHours: number; partitions: number };
  temporal: { address: string; namespace: string; uiUrl: string; testServerPath: string };
  /**
   * The payload codec of every Temporal client and worker: key encrypts (base64 of 32 bytes; else the
   * first key of keyFile, generated once); previousKeys only decrypt (rotation).
   */
  temporalCodec: { key?: string; previousKeys: string[]; keyFile: string };
  s3: { endPoint: string; port: number; useSSL: boolean; accessKey: string; secretKey: string; bucket: string; region: string };
  clamav: { host: string; port: number };
  /** linkBaseUrl: where the links in e-mails point; taskQueue: where the gateway starts mail workflows. */
  mail: { smtpHost: string; smtpPort: number; from: string; mailpitApiUrl: string; linkBaseUrl: string; taskQueue: string };
  /**
   * The relay: rows per batch, idle poll (LISTEN wakes it sooner), the linger (least time between batches),
   * bounded backoff while Kafka is down, how often it logs its status and deletes published rows
   * older than retentionHours.
   */
  outbox: {
    batchSize: number; idlePollMs: number; lingerMs: number; backoffInitialMs: number; backoffMaxMs: number; statusIntervalMs: number;
    retentionHours: number;
  };
  /**
   * The audit pipeline: the consumer's group, records per store transaction and partitions consumed
   * at once; the direct intake's Kafka deadline and how long it then writes straight to the fallback
   * buffer; the buffer's replay interval, batch and promised capacity (older rows raise an alarm).
   */
  audit: {
    consumerGroup: string; chunkSize: number; partitionsConcurrently: number; publishTimeoutMs: number; kafkaRetryMs: number;
    replayIntervalMs: number; replayBatchSize: number; bufferRetentionDays: number; statusIntervalMs: number;
    /** The REST intake's topic (tests send to their own); the anonymization lock and readers' wait for it. */
    intakeTopic: string; anonymizeLockSeconds: number; anonymizePollMs: number; anonymizeWaitMs: number;
    /** Whether the gateway writes audit.api.called, and how long it collects them before one send. */
    requestEnabled: boolean; requestFlushMs: number;
  };
  /**
   * Hot and cold audit storage: records stay in PostgreSQL for hotDays, then whole months move to
   * the object store (the retention Schedule runs every retentionIntervalHours) and are deleted after
   * coldYears. Cold exports are kept exportRetentionDays and handed out by presigned URLs valid
   * exportUrlTtlSeconds; taskQueue is where the gateway starts them (tests point it at their worker).
   */
  auditStorage: {
    hotDays: number; coldYears: number; retentionIntervalHours: number; exportRetentionDays: number;
    exportUrlTtlSeconds: number; taskQueue: string;
  };
  maintenance: { idempotencyKeyTtlHours: number; intervalMinutes: number; batchSize: number };
  /**
   * Usage limits (issue 5, part 2): enabled false skips every limit check (billing not deployed);
   * how long the gateway reuses a tenant's plan and status; the termination's minimum hours per
   * deleting phase and its rows or objects per batch.
   */
  billingLimits: { enabled: boolean; cacheTtlMs: number; terminationPhaseHours: number; terminationBatchSize: number };
  /** Money (document 2, Limits / Money). */
  money: { reversalMaxAgeDays: number; planLimitsCacheMs: number };
  /**
   * Workflow-backed money (holds, transfers): the task queue the gateway starts them on (tests point
   * it at their own worker), a hold's default TTL, open holds per wallet, and the safety-net sweep of
   * holds whose own timer did not expire them.
   */
  moneyFlows: { taskQueue: string; holdTtlHours: number; maxHoldsPerWallet: number; holdCleanupIntervalSec: number };
  billing: {
    stripeWebhookSecret: string; paddleWebhookSecret: string; trialDays: number;
    /** Where the gateway starts and signals subscription workflows (tests point it at their worker). */
    taskQueue: string;
    /** The Stripe-Signature timestamp tolerance. */
    webhookToleranceSeconds: number;
    /**
     * How often the Schedule `billing.webhook-redelivery` delivers receipts the gateway did not hand to
     * their subscription workflow; it takes receipts at least this old (younger ones are still in flight).
     */
    webhookRedeliveryIntervalSec: number;
    /** The gateway's delivery after the answer: signals in flight at most, receipts waiting at most (more wait for the sweep). */
    webhookDispatch: { concurrency: number; queueLimit: number };
    /** Durations of the subscription workflow, handed to it as its input (workflows read no config). */
    lifecycle: {
      trialNoticeDays: number; suspendAfterDays: number; terminateAfterDays: number; dunningNoticeDays: number[];
      downgradeGraceDays: number;
    };
  };
  /** Requests per window per group key (document 1, Limits); the admin roles get adminLimit. */
  rateLimit: { limit: number; adminLimit: number; windowMs: number };
  /** Route calls: the retry delay of idempotent GETs and the per-tenant breaker (document 1, circuit breaker). */
  resilience: { getRetryDelayMs: number; tenantBreaker: { errorRate: number; windowMs: number; minRequests: number; openMs: number } };
  /**
   * Document 1, Limits (roles per user, permissions per role, roles per tenant), and the gateway's
   * permission cache: how long a tenant's resolved permissions may be reused (a per-request version
   * check makes changes visible at once; the TTL bounds what a missed bump could cost) and how many
   * users' permissions it holds at most.
   */
  rbac: { maxRolesPerUser: number; maxPermissionsPerRole: number; maxRolesPerTenant: number; cacheTtlMs: number; cacheMaxEntries: number };
  /**
   * The module registry: the folder of the manifests (`<dir>/<slug>/manifest.json`), and the gateway's
   * cache of each tenant's active modules (how long a tenant's set is reused without a
   * module.registry event, and how many tenants it holds).
   */
  modules: { dir: string; cacheTtlMs: number; cacheMaxTenants: number };
  identity: {
    jwt: {
      issuer: string; audience: string; privateKey?: string; previousPublicKeys?: string; keyFile: string;
    };
    /** Lifetimes in seconds (document 1, Limits); the grace window may be fractional in tests. */
    ttl: { accessToken: number; refreshToken: number; refreshGrace: number; sessionToken: number; impersonation: number };
    /** One-time tokens by purpose, in seconds (a set-password link of POST /users lives as long as an invite). */
    oneTimeTokenTtl: { verifyEmail: number; resetPassword: number; invite: number };
    /** Verification e-mails a user may request within windowSeconds (document 1: 3 per hour). */
    verifyEmailRequests: { limit: number; windowSeconds: number };
    /**
     * Failed logins counted per account and per IP within windowSeconds; past the free attempts each
     * further one doubles a wait (at most maxDelaySeconds) that ends with the window.
     */
    loginThrottle: { windowSeconds: number; accountAttempts: number; ipAttempts: number; maxDelaySeconds: number };
    /**
     * External sign-in: the configured providers; how long a started sign-in (state, PKCE verifier,
     * nonce) may take; the deadline of each call to a provider; how long a discovery document is reused.
     */
    providers: { list: AuthProviderSettings[]; stateTtlSeconds: number; httpTimeoutMs: number; discoveryTtlSeconds: number };
    /** encryptionKey: base64 of 32 bytes; issuer: the name authenticator apps show. */
    mfa: { encryptionKey: string; issuer: string };
    /**
     * /auth/recovery: maxAttempts failures within windowSeconds lock recovery for lockSeconds (owner
     * alerted); accountLockFailures failures since the last success lock the account.
     */
    recovery: { maxAttempts: number; windowSeconds: number; lockSeconds: number; accountLockFailures: number };
  };
}

export class ConfigError extends Error {}

/** Reads `.env` (if present) beneath the real environment: the real environment always wins. */
function readDotEnv(): Record<string, string> {
  try {
    const text = readFileSync(join(repoRoot, '.env'), 'utf8');
    const entries = text.split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#') && line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')).trim(), line.slice(line.indexOf('=') + 1).trim()]);
    return Object.fromEntries(entries);
  } catch {
    return {};
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = { ...readDotEnv(), ...process.env }): Readonly<Config> {
  const { value: v, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) {
    const lines = error.details.map((d) => `  ${d.path.join('.')}: ${d.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const validateResponses = v.RESPONSE_VALIDATION === 'on'
    || (v.RESPONSE_VALIDATION === 'auto' && ['development', 'staging', 'test'].includes(v.NODE_ENV));
  return deepFreeze<Config>({
    env: v.NODE_ENV,
    logLevel: v.LOG_LEVEL,
    version: v.SERVICE_VERSION,
    api: {
      host: v.API_HOST, port: v.API_PORT, grpcPort: v.GRPC_PORT, problemBase: v.PROBLEM_BASE.replace(/\/+$/, ''),
      downstreamTimeoutMs: v.GRPC_CALL_TIMEOUT_MS, validateResponses,
      bodyLimitBytes: v.API_BODY_LIMIT_BYTES, shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
      verifiedTokenCacheSize: v.API_VERIFIED_TOKEN_CACHE_SIZE,
    },
    db: { url: v.DATABASE_URL, ownerUrl: v.DATABASE_OWNER_URL, poolSize: v.DATABASE_POOL_SIZE, analyticsUrl: v.ANALYTICS_DATABASE_URL },
    health: { checkTimeoutMs: v.HEALTH_CHECK_TIMEOUT_MS, maxEventLoopDelayMs: v.LIVE_MAX_EVENT_LOOP_DELAY_MS },
    featureFlags: { refreshMs: v.FEATURE_FLAGS_REFRESH_MS },
    redis: { url: v.REDIS_URL },
    kafka: {
      brokers: v.KAFKA_BROKERS.split(','), clientId: v.KAFKA_CLIENT_ID, retentionHours: v.BROKER_RETENTION_HOURS,
      auditRetentionHours: v.BROKER_AUDIT_RETENTION_HOURS, partitions: v.BROKER_PARTITIONS,
    },
    temporal: {
      address: v.TEMPORAL_ADDRESS, namespace: v.TEMPORAL_NAMESPACE, uiUrl: v.TEMPORAL_UI_URL,
      testServerPath: v.TEMPORAL_TEST_SERVER_PATH,
    },
    temporalCodec: {
      key: v.TEMPORAL_PAYLOAD_KEY, previousKeys: v.TEMPORAL_PAYLOAD_PREVIOUS_KEYS?.split(',') ?? [],
      keyFile: v.TEMPORAL_PAYLOAD_KEY_FILE ?? join(v.PLATFORM_DATA, 'temporal', 'payload-keys.json'),
    },
    s3: {
      endPoint: v.S3_ENDPOINT, port: v.S3_PORT, useSSL: v.S3_USE_SSL, accessKey: v.S3_ACCESS_KEY,
      secretKey: v.S3_SECRET_KEY, bucket: v.S3_BUCKET, region: v.S3_REGION,
    },
    clamav: { host: v.CLAMAV_HOST, port: v.CLAMAV_PORT },
    mail: {
      smtpHost: v.SMTP_HOST, smtpPort: v.SMTP_PORT, from: v.MAIL_FROM, mailpitApiUrl: v.MAILPIT_API_URL,
      linkBaseUrl: v.APP_BASE_URL.replace(/\/+$/, ''), taskQueue: v.NOTIFY_TASK_QUEUE,
    },
    outbox: {
      batchSize: v.OUTBOX_BATCH_SIZE, idlePollMs: v.OUTBOX_IDLE_POLL_MS, lingerMs: v.OUTBOX_LINGER_MS, backoffInitialMs: v.OUTBOX_BACKOFF_INITIAL_MS,
      backoffMaxMs: v.OUTBOX_BACKOFF_MAX_MS, statusIntervalMs: v.OUTBOX_STATUS_INTERVAL_MS, retentionHours: v.OUTBOX_RETENTION_HOURS,
    },
    audit: {
      consumerGroup: v.AUDIT_CONSUMER_GROUP, chunkSize: v.AUDIT_CONSUMER_CHUNK_SIZE,
      partitionsConcurrently: v.AUDIT_CONSUMER_CONCURRENCY, publishTimeoutMs: v.AUDIT_PUBLISH_TIMEOUT_MS,
      kafkaRetryMs: v.AUDIT_KAFKA_RETRY_MS, replayIntervalMs: v.AUDIT_FALLBACK_REPLAY_INTERVAL_MS,
      replayBatchSize: v.AUDIT_FALLBACK_BATCH_SIZE, bufferRetentionDays: v.AUDIT_FALLBACK_RETENTION_DAYS,
      statusIntervalMs: v.AUDIT_STATUS_INTERVAL_MS,
      intakeTopic: v.AUDIT_INTAKE_TOPIC, anonymizeLockSeconds: v.AUDIT_ANONYMIZE_LOCK_SECONDS,
      anonymizePollMs: v.AUDIT_ANONYMIZE_POLL_MS, anonymizeWaitMs: v.AUDIT_ANONYMIZE_WAIT_MS, requestEnabled: v.AUDIT_REQUEST_ENABLED, requestFlushMs: v.AUDIT_REQUEST_FLUSH_MS,
    },
    auditStorage: {
      hotDays: v.AUDIT_HOT_DAYS, coldYears: v.AUDIT_COLD_YEARS, retentionIntervalHours: v.AUDIT_RETENTION_INTERVAL_HOURS,
      exportRetentionDays: v.AUDIT_EXPORT_RETENTION_DAYS, exportUrlTtlSeconds: v.AUDIT_EXPORT_URL_TTL_SECONDS,
      taskQueue: v.AUDIT_TASK_QUEUE,
    },
    maintenance: {
      idempotencyKeyTtlHours: v.IDEMPOTENCY_KEY_TTL_HOURS, intervalMinutes: v.MAINTENANCE_INTERVAL_MINUTES,
      batchSize: v.MAINTENANCE_BATCH_SIZE,
    },
    billingLimits: {
      enabled: v.BILLING_ENABLED, cacheTtlMs: v.BILLING_CACHE_TTL * 1000,
      terminationPhaseHours: v.BILLING_TERMINATION_PHASE_HOURS, terminationBatchSize: v.BILLING_TERMINATION_BATCH_SIZE,
    },
    money: { reversalMaxAgeDays: v.MONEY_REVERSAL_MAX_AGE_DAYS, planLimitsCacheMs: v.MONEY_PLAN_LIMITS_CACHE_SECONDS * 1000 },
    moneyFlows: {
      taskQueue: v.MONEY_TASK_QUEUE, holdTtlHours: v.MONEY_HOLD_TTL_HOURS, maxHoldsPerWallet: v.MONEY_MAX_HOLDS_PER_WALLET,
      holdCleanupIntervalSec: v.MONEY_HOLD_CLEANUP_INTERVAL_SEC,
    },
    billing: {
      stripeWebhookSecret: v.BILLING_STRIPE_WEBHOOK_SECRET, paddleWebhookSecret: v.BILLING_PADDLE_WEBHOOK_SECRET,
      trialDays: v.BILLING_TRIAL_DAYS,
      taskQueue: v.BILLING_TASK_QUEUE,
      webhookToleranceSeconds: v.BILLING_WEBHOOK_TOLERANCE_SECONDS,
      webhookRedeliveryIntervalSec: v.BILLING_WEBHOOK_REDELIVERY_INTERVAL_SEC,
      webhookDispatch: { concurrency: v.BILLING_WEBHOOK_DISPATCH_CONCURRENCY, queueLimit: v.BILLING_WEBHOOK_DISPATCH_QUEUE },
      lifecycle: {
        trialNoticeDays: v.BILLING_TRIAL_NOTICE_DAYS, suspendAfterDays: v.BILLING_SUSPEND_AFTER_DAYS,
        terminateAfterDays: v.BILLING_TERMINATE_AFTER_DAYS, downgradeGraceDays: v.BILLING_DOWNGRADE_GRACE_DAYS,
        dunningNoticeDays: dunningNoticeDays(v.BILLING_DUNNING_NOTICE_DAYS, v.BILLING_TERMINATE_AFTER_DAYS),
      },
    },
    rateLimit: { limit: v.RATE_LIMIT_PER_MINUTE, adminLimit: v.RATE_LIMIT_ADMIN_PER_MINUTE, windowMs: v.RATE_LIMIT_WINDOW_MS },
    resilience: {
      getRetryDelayMs: v.GET_RETRY_DELAY_MS,
      tenantBreaker: {
        errorRate: v.TENANT_BREAKER_ERROR_RATE, windowMs: v.TENANT_BREAKER_WINDOW_MS,
        minRequests: v.TENANT_BREAKER_MIN_REQUESTS, openMs: v.TENANT_BREAKER_OPEN_MS,
      },
    },
    rbac: {
      maxRolesPerUser: v.RBAC_MAX_ROLES_PER_USER, maxPermissionsPerRole: v.RBAC_MAX_PERMISSIONS_PER_ROLE,
      maxRolesPerTenant: v.RBAC_MAX_ROLES_PER_TENANT, cacheTtlMs: v.RBAC_CACHE_TTL_MS, cacheMaxEntries: v.RBAC_CACHE_MAX_ENTRIES,
    },
    modules: { dir: v.MODULES_DIR, cacheTtlMs: v.MODULE_CACHE_TTL_MS, cacheMaxTenants: v.MODULE_CACHE_MAX_TENANTS },
    identity: {
      jwt: {
        issuer: v.JWT_ISSUER, audience: v.JWT_AUDIENCE, privateKey: v.JWT_PRIVATE_KEY, previousPublicKeys: v.JWT_PREVIOUS_PUBLIC_KEYS,
        keyFile: v.JWT_KEY_FILE ?? join(v.PLATFORM_DATA, 'jwt', 'signing-keys.json'),
      },
      ttl: {
        accessToken: v.ACCESS_TOKEN_TTL_SECONDS, refreshToken: v.REFRESH_TOKEN_TTL_SECONDS,
        refreshGrace: v.REFRESH_GRACE_SECONDS, sessionToken: v.SESSION_TOKEN_TTL_SECONDS,
        impersonation: v.IMPERSONATION_TOKEN_TTL_SECONDS,
      },
      oneTimeTokenTtl: {
        verifyEmail: v.VERIFY_EMAIL_TOKEN_TTL_SECONDS, resetPassword: v.RESET_PASSWORD_TOKEN_TTL_SECONDS,
        invite: v.INVITE_TOKEN_TTL_SECONDS,
      },
      verifyEmailRequests: { limit: v.VERIFY_EMAIL_REQUEST_LIMIT, windowSeconds: v.VERIFY_EMAIL_REQUEST_WINDOW_SECONDS },
      loginThrottle: {
        windowSeconds: v.LOGIN_THROTTLE_WINDOW_SECONDS, accountAttempts: v.LOGIN_THROTTLE_ACCOUNT_ATTEMPTS,
        ipAttempts: v.LOGIN_THROTTLE_IP_ATTEMPTS, maxDelaySeconds: v.LOGIN_THROTTLE_MAX_DELAY_SECONDS,
      },
      providers: {
        list: v.AUTH_PROVIDERS, stateTtlSeconds: v.AUTH_PROVIDER_STATE_TTL_SECONDS,
        httpTimeoutMs: v.AUTH_PROVIDER_HTTP_TIMEOUT_MS, discoveryTtlSeconds: v.AUTH_PROVIDER_DISCOVERY_TTL_SECONDS,
      },
      mfa: { encryptionKey: v.MFA_ENCRYPTION_KEY, issuer: v.MFA_ISSUER },
      recovery: {
        maxAttempts: v.RECOVERY_MAX_ATTEMPTS, windowSeconds: v.RECOVERY_WINDOW_SECONDS, lockSeconds: v.RECOVERY_LOCK_SECONDS,
        accountLockFailures: v.RECOVERY_ACCOUNT_LOCK_FAILURES,
      },
    },
  });
}

/**
 * Document 1: at least 5 notifications precede any soft delete, so the list must hold at least five
 * days before the termination day; a shorter list stops the process at start-up.
 */
function dunningNoticeDays(list: string, terminateAfterDays: number): number[] {
  const days = [...new Set(list.split(',').map(Number))].sort((a, b) => a - b);
  if (days.filter((day) => day < terminateAfterDays).length < 5) {
    throw new ConfigError('BILLING_DUNNING_NOTICE_DAYS must name at least 5 days before BILLING_TERMINATE_AFTER_DAYS');
  }
  return days;
}

function deepFreeze<T>(value: T): Readonly<T> {
  for (const child of Object.values(value as object)) {
    if (child && typeof child === 'object') deepFreeze(child);
  }
  return Object.freeze(value);
}

let cached: Readonly<Config> | undefined;

/** The process-wide configuration; entry points call it once so a bad value fails at start-up. */
export function config(): Readonly<Config> {
  cached ??= loadConfig();
  return cached;
}
