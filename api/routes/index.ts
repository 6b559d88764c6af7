import type { AccessControl } from '../runtime/access-control';
import type { AuditDeps } from '../../services/audit/deps';
import type { IdentityDeps } from '../../services/identity/deps';
import type { AuditExportDeps } from '../../services/audit/export/deps';
import { auditExportRoutes } from './audit/export.routes';
import type { AnyRoute } from '../http/route-registry';
import { helloRoutes } from './gateway/hello.routes';
import { authRoutes } from './identity/auth.routes';
import { meAvatarRoutes } from './identity/me-avatar.routes';
import { sessionRoutes } from './identity/sessions.routes';
import { providerRoutes } from './identity/providers.routes';
import { mfaRoutes } from './identity/mfa.routes';
import { impersonationRoutes } from './identity/impersonation.routes';
import { userRoutes } from './identity/users.routes';
import { auditRecordRoutes } from './audit/records.routes';
import { roleRoutes } from './access/roles.routes';
import { securityRoutes } from './identity/security.routes';
import { userCreateRoutes } from './identity/user-create.routes';
import { apiKeyRoutes } from './identity/api-keys.routes';
import type { BillingStateDeps } from '../../services/billing/state-deps';
import { usageRoutes } from './billing/usage.routes';
import { terminationAdminRoutes } from './billing/admin.routes';
import type { MoneyDeps } from '../../services/money/deps';
import { walletRoutes } from './money/wallets.routes';
import { transactionRoutes } from './money/transactions.routes';
import { reversalRoutes } from './money/reversals.routes';
import type { MoneyFlows } from '../../services/money/workflow-client';
import { holdRoutes } from './money/holds.routes';
import { transferRoutes } from './money/transfers.routes';
import { moduleRoutes } from './modules/modules.routes';
import type { ModuleServices } from '../runtime/module-cache';
import type { TemporalHandle } from '../../common/temporal/client';
import { createBillingServices } from '../../services/billing/deps';
import { planRoutes } from './billing/plans.routes';
import { subscriptionRoutes } from './billing/subscriptions.routes';
import { webhookRoutes } from './billing/webhooks.routes';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { LimitEnforcement } from '../middleware/billing-enforcement';
import { jobKinds } from '../../services/jobs/registry';
import { jobRoutes } from './jobs/jobs.routes';
import type { DataDeps } from '../../services/data/records';
import { dataRecordRoutes } from './data/records.routes';
import { dataModelRoutes } from './data/models.routes';
import type { FilesDeps } from '../../services/files/deps';
import { fileRoutes } from './files/files.routes';
import { filePresignRoutes } from './files/presign.routes';
import { fileTrashRoutes } from './files/trash.routes';
import { thumbnailRoutes } from './files/thumbnails.routes';
import type { EventPublishingDeps } from '../../services/events/publishing';
import { eventPublishRoutes } from './events/publish.routes';
import { deadLetterRoutes } from './events/dlq.routes';
import { webhookEndpointRoutes } from './events/webhooks.routes';
import { createWebhookDeps } from '../../services/events/webhooks/deps';
import type { DeadLetterDeps } from '../../services/events/dead-letters/deps';
import { fileProcessRoutes } from './files/process.routes';
import { fileTusRoutes } from './files/tus.routes';

/** The services route factories are given (built by the gateway runtime). */
export interface RouteServices {
  identity: IdentityDeps;
  audit: AuditDeps;
  access: AccessControl;
  auditExport: AuditExportDeps;
  billing: BillingStateDeps;
  money: MoneyDeps;
  /** Holds and transfers, started as Temporal workflows. */
  moneyFlows: MoneyFlows;
  modules: ModuleServices;
  /** The data layer's record endpoints (docs/reference/data.md#resources). */
  data: DataDeps;
  /** Uploads and reading files (docs/reference/files.md#resources). */
  files: FilesDeps;
  /** Publishing through the event bus (docs/reference/events.md#rule-11), and its dead letters. */
  events: EventPublishingDeps & { deadLetters: DeadLetterDeps };
  /** Undefined until the gateway's start-up connection to Temporal succeeded. */
  temporal: () => TemporalHandle | undefined;
  /** The gateway's metrics (the runtime's): the billing webhooks report their delivery backlog there. */
  gateway?: {
    metrics: GatewayMetrics;
    /** The plan-limit step, absent when billing is off: a subscription change forgets the tenant's cached plan before it answers. */
    limits?: Pick<LimitEnforcement, 'forget'> | null;
  };
}

/**
 * Every route of the gateway. A domain adds its routes here (a list, or a factory given the
 * services it needs); the router and the OpenAPI documents are both built from this list.
 */
export function platformRoutes(services: RouteServices): AnyRoute[] {
  return [
    ...helloRoutes,
    ...authRoutes(services.identity),
    ...meAvatarRoutes(services.identity),
    ...sessionRoutes(services.identity),
    ...providerRoutes(services.identity, services.access.resolver),
    ...mfaRoutes(services.identity),
    ...userRoutes(services.identity),
    ...impersonationRoutes(services.identity),
    // Before the record routes: GET /audit/:id (route set B) would take /audit/export.
    ...auditExportRoutes(services.auditExport),
    ...auditRecordRoutes(services.audit),
    ...roleRoutes({ ...services.identity, versions: services.access.versions }),
    ...securityRoutes(services.identity),
    ...userCreateRoutes(services.identity),
    ...apiKeyRoutes({ db: services.identity.db, permissions: services.access.resolver }),
    ...usageRoutes(services.billing),
    ...terminationAdminRoutes(services.billing),
    ...walletRoutes(services.money),
    ...transactionRoutes(services.money),
    ...reversalRoutes(services.money),
    ...holdRoutes(services.moneyFlows),
    ...transferRoutes(services.moneyFlows),
    ...moduleRoutes(services.modules),
    ...dataModelRoutes(services.data),
    // After GET /data/:module/models (introspection), which GET /data/:module/:model would take.
    ...dataRecordRoutes(services.data),
    ...fileRoutes(services.files),
    ...filePresignRoutes(services.files),
    ...fileTrashRoutes(services.files),
    ...thumbnailRoutes(services.files),
    ...eventPublishRoutes(services.events),
    ...deadLetterRoutes(services.events.deadLetters),
    ...webhookEndpointRoutes(createWebhookDeps(
      services.identity.config, services.events.deadLetters.db, services.temporal, services.events.deadLetters.audit,
    )),
    ...fileProcessRoutes({ ...services.files, temporal: services.temporal }),
    ...fileTusRoutes({ ...services.files, s3: services.identity.config.s3, temporal: services.temporal }),
    ...billingRoutes(services),
    ...jobRoutes({
      kinds: jobKinds({ auditExport: services.auditExport, money: { db: services.money.db } }), temporal: services.temporal,
      resolver: services.access.resolver, problemBase: services.identity.config.api.problemBase,
    }),
  ];
}

function billingRoutes(services: RouteServices): AnyRoute[] {
  const { config, db, logger } = services.identity;
  const billing = createBillingServices(config, { db, temporal: services.temporal, metrics: services.gateway?.metrics.registry }, logger);
  const planChanged = (tenantId: string) => services.gateway?.limits?.forget(tenantId);
  return [...planRoutes(billing), ...subscriptionRoutes(billing, planChanged), ...webhookRoutes(billing)];
}
