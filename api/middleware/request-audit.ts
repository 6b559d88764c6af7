import type { AuditIntake } from '../../services/audit/record-publisher';
import type { AuditDraft } from '../../services/audit/writer';
import type { Logger } from '../../common/logger';
import { matchedRoute, type AppMiddleware } from '../context';

export interface RequestAuditSettings {
  enabled: boolean;
  /** Records are sent together at most this long after the first of a batch. */
  flushMs: number;
  /** A batch is sent at once when it reaches this size (the intake's own batch limit). */
  maxBatch: number;
}

/**
 * Writes `audit.api.called` for every authenticated request (docs/reference/gateway.md#rule-17: method, route, status,
 * latency, actor, tenant, trace id) through the audit intake, after the response, so the audit
 * path never delays or fails a request. Records are batched for flushMs: one Kafka send per batch
 * instead of one per request keeps the gateway's throughput; the intake's fallback buffer catches
 * what Kafka does not take. The price is that a process killed with SIGKILL loses at most the last
 * flushMs of request records (graceful shutdown flushes); business audit records never take this
 * path, they commit with their change through the outbox.
 * Requests without a token have no tenant to audit under and are only logged.
 */
export class RequestAuditor {
  private batch: AuditDraft[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<unknown>>();

  constructor(private readonly intake: AuditIntake, private readonly settings: RequestAuditSettings, private readonly logger: Logger) {}

  middleware(): AppMiddleware {
    if (!this.settings.enabled) return (_ctx, next) => next();
    return async (ctx, next) => {
      const started = performance.now();
      try {
        await next();
      } finally {
        const auth = ctx.state.auth;
        if (auth) {
          const route = matchedRoute(ctx) ?? ctx.path;
          this.record({
            tenantId: auth.tenantId,
            source: 'gateway',
            traceId: ctx.state.traceId,
            action: 'audit.api.called',
            entityType: 'route',
            entityId: `${ctx.method} ${route}`.slice(0, 200),
            actorId: auth.userId,
            actorIp: ctx.ip || null,
            actorUserAgent: ctx.get('user-agent').slice(0, 500) || null,
            impersonatorId: auth.impersonatorId ?? null,
            meta: { method: ctx.method, route, path: ctx.path, status: ctx.status, latencyMs: Math.round(performance.now() - started) },
          });
        }
      }
    };
  }

  record(draft: AuditDraft): void {
    this.batch.push(draft);
    if (this.batch.length >= this.settings.maxBatch) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.settings.flushMs);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.batch.length === 0) return;
    const drafts = this.batch;
    this.batch = [];
    const sending = this.intake.publishAuditRecords(drafts)
      .catch((error: unknown) => this.logger.error({ err: error, records: drafts.length }, 'request audit records lost: Kafka and the fallback buffer refused them'))
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  /** Sends what is pending and waits for every send in flight (graceful shutdown). */
  async close(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.inFlight]);
  }
}
