import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { FeatureFlagCache } from './runtime/flag-cache';
import { componentChecks } from './health/components';
import { operationsBacklogs, pingDatabase } from '../services/gateway/probes';
import { EventLoopMonitor } from './health/event-loop';
import { createHealthReporter } from './health/health-report';
import type { ReadinessCondition } from './health/readiness';
import { createAccessControl, type AccessControl } from './runtime/access-control';
import { SlidingWindowLimiter } from './runtime/rate-limiter';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { registerBacklogMetrics } from './metrics/backlog-metrics';
import type { AppDeps } from './app';
import { createAuditServices } from '../services/audit';
import type { AuditDeps } from '../services/audit/deps';
import { auditTrail } from '../services/audit/writer';
import { RequestAuditor } from './middleware/request-audit';
import { createIdentityServices } from '../services/identity';
import { MeCache } from './runtime/me-cache';
import { SessionRevocations } from './runtime/session-revocations';
import { VerifiedApiKeys } from './runtime/verified-api-keys';
import { API_KEY_CHANGES_CHANNEL } from '../services/identity/api-keys';
import { SESSION_REVOCATIONS_CHANNEL } from '../services/identity/user-sessions';
import { createAuditExportServices } from '../services/audit/export';
import type { AuditExportDeps } from '../services/audit/export/deps';
import type { IdentityDeps } from '../services/identity/deps';
import { createMoneyServices } from '../services/money';
import type { MoneyDeps } from '../services/money/deps';
import { createModuleServices, type ModuleServices } from './runtime/module-cache';
import { loadModuleCatalogue } from '../services/modules/catalogue';
import { DataCatalogue } from '../services/data/catalogue';
import { loadDataHooks } from '../services/data/hooks';
import type { DataDeps } from '../services/data/records';
import { CircuitBreakers } from './resilience/circuit-breaker';
import { TenantBreakers } from './resilience/tenant-breaker';
import { connectTemporal, type TemporalHandle } from '../common/temporal/client';
import { createLimitEnforcement } from './middleware/billing-enforcement';
import type { BillingStateDeps } from '../services/billing/state-deps';
import { publishedEventsMeter } from '../services/billing/event-usage';
import { ensureBucket } from './runtime/bucket';
import { closeConnections, openConnections, type Connections } from './runtime/connections';
import { retryUntilDone } from './runtime/retry';
import { MoneyFlows } from '../services/money/workflow-client';
import { MoneyAdmission } from '../services/money/admission';
import { PgChannelListener } from '../db/pg-channel-listener';
import { RBAC_VERSIONS_CHANNEL } from '../services/access/grants';
import { ACCOUNT_CHANGES_CHANNEL } from '../services/identity/account-changes';
import { FEATURE_FLAGS_CHANNEL } from '../services/gateway/feature-flags';
import { createObjectStore } from '../common/object-store';
import type { FilesDeps } from '../services/files/deps';
import { FileScanStarter, fileScanSettingsOf } from '../services/files/scan-client';
import { FileTrashTimers } from '../services/files/trash-client';
import { createEventsServices, type EventsDeps } from '../services/events/deps';
import { registerKernelSchemas } from '../services/events/schema-registry';
import { registerCatalogueSchemas } from '../services/modules/module-registry';
import { EventServiceProbe } from './grpc/probe';

/** Everything the gateway process runs besides HTTP: clients, caches, monitors, start-up tasks. */
export interface GatewayRuntime {
  connections: Connections;
  /** Undefined until the start-up connection to Temporal succeeds. */
  temporal(): TemporalHandle | undefined;
  breakers: CircuitBreakers;
  /** The global feature flags, reloaded when PostgreSQL announces a change (migration 0035) and on an interval. */
  flags: FeatureFlagCache;
  /** Signing keys, token service and login throttle of the identity routes. */
  identity: IdentityDeps;
  /** GET /auth/me's answers, kept per account and tenant while PostgreSQL announces their changes. */
  meAnswers: MeCache;
  /** The ended sessions (migration 0039), whose access tokens every bearer route and the EventService refuse. */
  revocations: SessionRevocations;
  /** The permission resolver, its cache and the cache's auth.role.changed consumer. */
  access: AccessControl;
  /**
   * One connection LISTENing on what PostgreSQL announces to the gateway's caches: the tenants' RBAC
   * versions (migration 0020, to the permission cache's version reader), changed accounts (0024,
   * to the /auth/me answers), changed feature flags (0035, to the flag cache) and ended sessions
   * (0039, to the revocations), and changed API keys (0038, to the verified keys). Until it listens, the
   * first two read per request, the flags reload on their interval, every request's session is checked in
   * the database and every API key is read.
   */
  announcements: PgChannelListener;
  /** The module catalogue, the installed-modules cache and the cache's module.registry.* consumer. */
  modules: ModuleServices;
  /** What createApp needs besides routes and probes: token checks, permissions, rate limits, metrics. */
  gateway: Pick<
    AppDeps, 'tokens' | 'revocations' | 'apiKeys' | 'permissions' | 'limiter' | 'metrics' | 'breakers' | 'tenantBreakers' | 'requestAudit' | 'limits' | 'installedModules'
  >;
  /** Usage, usage history and termination routes. */
  billing: BillingStateDeps;
  /** The audit intake and the pools of the audit routes. */
  audit: AuditDeps;
  /** Hot exports, cold-export jobs and their downloads (GET /audit/export). */
  auditExport: AuditExportDeps;
  /** Wallets, the ledger and the money plan-limit cache. */
  money: MoneyDeps;
  /** Holds and transfers (workflows/money), started on config.moneyFlows.taskQueue. */
  moneyFlows: MoneyFlows;
  /** The data layer's record endpoints: the autoApi models of the catalogue's manifests. */
  data: DataDeps;
  /** Uploads (streamed to staging, scans started on config.files.taskQueue) and reading files. */
  files: FilesDeps;
  /** Publishing through the event bus: the schema registry and a fail-fast producer (docs/reference/events.md#rule-10). */
  events: EventsDeps;
  /** Whether the EventService (gRPC, api/grpc/server.ts, started beside HTTP) answers, for /health. */
  eventService: EventServiceProbe;
  /** The probe dependencies of createApp. */
  probes: Pick<AppDeps, 'liveness' | 'readiness' | 'health'>;
  /** Settles when every start-up task has finished, or stopped because the runtime closed. */
  started: Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates the clients and starts the background work: connecting to PostgreSQL and Temporal,
 * waiting for Redis, loading the feature flags, creating the bucket. Nothing here waits for a
 * service, so the gateway listens at once and /ready reports what is still missing.
 */
export async function startGatewayRuntime(config: Readonly<Config>, logger: Logger): Promise<GatewayRuntime> {
  const stopping = new AbortController();
  const retry = { logger, signal: stopping.signal };
  // Before anything is opened: a broken module manifest stops the start with its file and mistakes.
  const catalogue = loadModuleCatalogue(config.modules.dir, { maxModels: config.data.maxTablesPerModule });
  // Likewise a manifest hook whose handler its module's code lacks.
  const dataHooks = loadDataHooks(catalogue);
  const connections = await openConnections(config, logger);
  const audit = createAuditServices(config, connections, logger);
  const requestAudit = new RequestAuditor(audit.intake, { enabled: config.audit.requestEnabled, flushMs: config.audit.requestFlushMs, maxBatch: 500 }, logger);
  let temporal: TemporalHandle | undefined;
  /** The scan starter of the Temporal client connected (the files routes' `scans`). */
  let fileScans: { client: TemporalHandle['client']; starter: FileScanStarter } | undefined;
  const access = createAccessControl(config, connections.db, logger);
  // Bounded like the permission cache: an answer carries the same grants.
  const meAnswers = new MeCache({
    db: connections.db, versions: access.versions, ttlMs: config.rbac.cacheTtlMs, maxAccounts: config.rbac.cacheMaxEntries,
  });
  // An ended session's tokens are refused until the longest-lived of them (an impersonation's or a plain one) has expired.
  const revocations = new SessionRevocations({
    db: connections.db, logger, tokenLifetimeSeconds: Math.max(config.identity.ttl.accessToken, config.identity.ttl.impersonation),
  });
  const identity = await createIdentityServices(config, { ...connections, temporal: () => temporal, meAnswers }, logger);
  // Bounded like the verified access tokens, reused no longer than the permission cache (migration 0038 announces revocations).
  const apiKeys = new VerifiedApiKeys({
    db: connections.db, maxEntries: config.api.verifiedTokenCacheSize, ttlMs: config.rbac.cacheTtlMs, logger,
  });
  const flags = new FeatureFlagCache(connections.db, logger, config.featureFlags.refreshMs);
  const announcements = new PgChannelListener({
    url: config.db.url, name: 'announcements', applicationName: `gateway-announcements-${process.pid}`, timeoutMs: config.health.checkTimeoutMs,
  }, { [RBAC_VERSIONS_CHANNEL]: access.versions, [ACCOUNT_CHANGES_CHANNEL]: meAnswers, [FEATURE_FLAGS_CHANNEL]: flags,
    [SESSION_REVOCATIONS_CHANNEL]: revocations, [API_KEY_CHANGES_CHANNEL]: apiKeys,
  }, logger);
  const breakers = new CircuitBreakers();
  const tenantBreakers = new TenantBreakers(config.resilience.tenantBreaker);
  const sweepTenants = setInterval(() => tenantBreakers.sweep(), config.resilience.tenantBreaker.windowMs);
  sweepTenants.unref();
  const money = createMoneyServices(config, connections, logger);
  const modules = { ...createModuleServices(config, catalogue, connections.db, logger), versions: access.versions };
  const meter = publishedEventsMeter(connections.db, config.billingLimits.enabled, logger);
  const events = createEventsServices(config, {
    db: connections.db, catalogue, installed: modules.installed, meter, temporal: () => temporal, audit: auditTrail,
  }, logger);
  const limits = createLimitEnforcement(config, connections.db, flags, logger, (tenantId) => money.limits.invalidate(tenantId));
  const eventLoop = new EventLoopMonitor(config.health.maxEventLoopDelayMs);
  const established = { postgres: false, redis: false };

  eventLoop.start();
  flags.start();
  // Reconnects by itself; until it listens, permission checks read the RBAC version and /auth/me its answer per request,
  // and the flags change only at their interval reload.
  announcements.start();
  connections.redis.once('ready', () => { established.redis = true; });
  connections.redis.connect().catch(() => { /* reported by the 'error' listener; ioredis keeps reconnecting */ });

  const started = Promise.all([
    retryUntilDone('PostgreSQL connection', async () => {
      await pingDatabase(connections.db);
      established.postgres = true;
    }, retry),
    retryUntilDone('Temporal connection', async () => {
      const handle = await connectTemporal(config.temporal, config.temporalCodec);
      // A connection that succeeds after shutdown began must not keep the process alive.
      if (stopping.signal.aborted) await handle.connection.close();
      else temporal = handle;
    }, retry),
    // Only an early invalidation: permission checks stay correct while Kafka is away.
    retryUntilDone('permission cache consumer', () => access.roleChanges.start(), retry),
    // Like the permission cache: the TTL keeps plan checks correct enough while Kafka is away.
    ...(limits ? [retryUntilDone('plan cache consumer', () => limits.listener.start(), retry)] : []),
    // Only an early invalidation: the installed-modules cache also expires by its TTL.
    retryUntilDone('installed-modules cache consumer', () => modules.changes.start(), retry),
    // Idempotent: a start with the same schemas adds nothing; an incompatible change is logged and retried.
    retryUntilDone('event schemas', async () => {
      await registerKernelSchemas(connections.db);
      await registerCatalogueSchemas(connections.db, catalogue);
    }, retry),
    retryUntilDone(`bucket ${config.s3.bucket}`, async () => {
      const outcome = await ensureBucket(connections.s3, config.s3.bucket, config.s3.region);
      logger.info({ bucket: config.s3.bucket, outcome }, 'object storage bucket ensured');
    }, retry),
  ]).then(() => eventLoop.forgetStartup());

  const readiness: ReadinessCondition[] = [
    { name: 'feature_flags', met: () => flags.status().loaded, reason: 'feature-flag cache not loaded' },
    { name: 'postgres', met: () => established.postgres, reason: 'PostgreSQL pool not connected' },
    { name: 'temporal', met: () => temporal !== undefined, reason: 'Temporal connection not established' },
    { name: 'redis', met: () => established.redis, reason: 'Redis not connected' },
  ];

  const eventService = new EventServiceProbe();
  const checks = componentChecks({
    ...connections,
    eventService,
    temporal: () => temporal,
    bucket: config.s3.bucket,
    flags,
    breakers,
    timeoutMs: config.health.checkTimeoutMs,
  });

  const metrics = new GatewayMetrics(breakers, tenantBreakers, {
    lookups: { permissions: access.cache.stats, me: meAnswers.stats }, isListening: () => announcements.isListening,
  });
  registerBacklogMetrics(metrics.registry, () => operationsBacklogs(connections.db, config.backlogMetrics.timeoutMs), config.backlogMetrics, logger);

  return {
    connections,
    temporal: () => temporal,
    breakers,
    flags,
    identity,
    meAnswers,
    revocations,
    access,
    announcements,
    modules,
    gateway: {
      tokens: identity.tokens,
      revocations,
      apiKeys,
      permissions: access.resolver,
      limiter: new SlidingWindowLimiter(connections.redis),
      metrics,
      breakers,
      tenantBreakers,
      requestAudit,
      limits,
      installedModules: modules.installed,
    },
    billing: { config, db: connections.db, analyticsDb: connections.analyticsDb, temporal: () => temporal },
    audit,
    auditExport: createAuditExportServices(config, connections, () => temporal),
    money,
    // The plan-limit cache is the money routes' own: one cache per gateway.
    moneyFlows: new MoneyFlows({
      config, db: connections.db, temporal: () => temporal, limits: money.limits,
      admission: new MoneyAdmission(connections.redis, config.moneyFlows, logger, () => metrics.rateLimited('money-in-flight')),
    }),
    data: {
      db: connections.db, reads: connections.tenantReads, catalogue: new DataCatalogue(catalogue), permissions: access.resolver, limits: config.data,
      hooks: dataHooks, enforcePlanLimits: config.billingLimits.enabled,
      // A read is cancelled by PostgreSQL no later than the gateway gives up on it (its 504).
      readTimeoutMs: Math.min(config.data.statementTimeoutMs, config.api.downstreamTimeoutMs),
    },
    files: {
      db: connections.db,
      objectStore: createObjectStore(config.s3),
      scans: () => {
        if (!temporal) return undefined;
        // One starter per client: its reading of the scan backlog serves every upload for a few seconds.
        if (fileScans?.client !== temporal.client) {
          const starter = new FileScanStarter(temporal.client, config.files.taskQueue, fileScanSettingsOf(config), config.files.scanPriorityThreshold);
          fileScans = { client: temporal.client, starter };
        }
        return fileScans.starter;
      },
      trashes: () => temporal && new FileTrashTimers(temporal.client, config.files.taskQueue, config.files.softDeleteRetentionDays),
      settings: config.files,
      enforcePlanLimits: config.billingLimits.enabled,
      logger,
    },
    events,
    eventService,
    probes: {
      liveness: () => eventLoop.liveness(),
      readiness,
      health: createHealthReporter(checks, breakers, config.version),
    },
    started,
    async close() {
      stopping.abort();
      clearInterval(sweepTenants);
      eventService.close();
      flags.stop();
      eventLoop.stop();
      // A start-up attempt in flight (a Temporal connect lasts up to its 5 s timeout) ends first,
      // so nothing it opens outlives the runtime.
      await started;
      await requestAudit.close();
      await Promise.allSettled([
        closeConnections(connections), temporal?.connection.close(), audit.intake.close(), access.roleChanges.stop(), announcements.stop(),
        limits?.listener.stop(), modules.changes.stop(), events.close(),
      ]);
    },
  };
}
