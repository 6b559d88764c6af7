import type { DeadLetterRow } from '../../../db/queries/events/dead-letters.queries';
import type { AuditEntry } from '../audit-trail';

/** Who moves a dead letter: the operator of the request (or of the request that started replay-all), and its trace. */
export interface DeadLetterActor {
  tenantId: string;
  actorId: string | null;
  traceId?: string;
}

const SOURCE = 'events';

/** One record per dead letter re-published, by a retry or by replay-all (its job id in `meta.jobId`). */
export type DeadLetterAuditAction = 'events.dlq.retried' | 'events.dlq.replayed';

/**
 * The audit record of a re-published dead letter, written with the bus's audit trail (DeadLetterDeps.audit)
 * in the transaction that marks it retrying. It names the event and the group, not the payload: the dead
 * letter keeps that, and the audit trail is kept far longer than the event.
 */
export function deadLetterAudit(action: DeadLetterAuditAction, row: DeadLetterRow, actor: DeadLetterActor, meta: Record<string, unknown> = {}): AuditEntry {
  return {
    tenantId: row.tenantId,
    source: SOURCE,
    action,
    entityType: 'event_dead_letter',
    entityId: row.id,
    actorId: actor.actorId,
    before: { status: row.status },
    after: { status: 'retrying' },
    meta: {
      eventId: row.eventId, eventType: row.eventType, consumerGroup: row.consumerGroup, topic: row.topic,
      timesDeadLettered: row.timesDeadLettered, ...meta,
    },
    traceId: actor.traceId,
  };
}

/** The audit record of a replay-all request (DLQReplayAll, POST /integrations/dlq/replay): started, or joined a running one. */
export function replayRequestAudit(actor: DeadLetterActor, jobId: string, joined: boolean): AuditEntry {
  return {
    tenantId: actor.tenantId,
    source: SOURCE,
    action: 'events.dlq.replay_requested',
    entityType: 'event_dead_letter_replay',
    entityId: jobId,
    actorId: actor.actorId,
    meta: { joined },
    traceId: actor.traceId,
  };
}
