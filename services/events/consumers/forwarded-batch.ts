import type { EventEnvelope } from '../../../common/event-envelope';
import { forwardedKnownOf, settleForwarded } from '../../../db/queries/events/receipts.queries';
import type { StatementRows } from '../../../db/tenant-reads';
import { receiptExpiry } from './delivery-rules';

/** What a forwarding group's delivery comes to: its outcome now, or forwarded and counted when the batch settles. */
export type BeforeForwarding = 'forward' | 'settle-later' | 'duplicate' | 'left-dead-lettered';

/** What a settled delivery came to. */
export type SettledOutcome = 'handled' | 'resolved' | 'duplicate';

interface Pending {
  envelope: EventEnvelope;
  redelivery: boolean;
  /** False for a redelivery of an event forwarded before: it only resolves its dead letter. */
  forwarded: boolean;
}

/**
 * The receipts of one fetched batch of a forwarding group (group-consumer.ts; a Subscribe stream).
 * A forwarded event has no transaction of its own to commit its receipt with, so the batch reads the
 * receipts and dead letters of all its events at once (`read`, one statement per tenant) before the
 * first is forwarded, and claims the receipts of what it forwarded together (`settle`, one more) before
 * the batch's offsets are committed: two statements per batch, each entering the tenant itself
 * (migration 0034), where there were two tenant transactions of four round trips each. Events forwarded earlier in the batch count as received, so a duplicate publish within one
 * batch is dropped as well. A crash between forwarding and settling forwards those events again: at
 * least once, and exactly once outside a crash.
 */
export class ForwardedBatch {
  private readonly known = new Map<string, 'receipt' | 'dead-letter'>();
  private pending: Pending[] = [];

  private constructor(private readonly statements: StatementRows, private readonly groupId: string, private readonly dedupHours: number) {}

  static async read(statements: StatementRows, groupId: string, dedupHours: number, events: readonly EventEnvelope[]): Promise<ForwardedBatch> {
    const batch = new ForwardedBatch(statements, groupId, dedupHours);
    for (const [tenantId, ofTenant] of byTenant(events, (event) => event)) {
      const ids = ofTenant.map((event) => event.id);
      const { receipts, deadLetters } = await forwardedKnownOf(statements, tenantId, groupId, ids);
      for (const id of deadLetters) batch.known.set(id, 'dead-letter');
      // A receipt decides before a dead letter: the event was forwarded (by a redelivery, or another member).
      for (const id of receipts) batch.known.set(id, 'receipt');
    }
    return batch;
  }

  /**
   * Whether to forward the event: not when the group has received it (a redelivery of it still
   * resolves its dead letter when the batch settles), nor when it is dead-lettered and this is not
   * its redelivery (it is left to the dead-letter tools).
   */
  before(envelope: EventEnvelope, redelivery: boolean): BeforeForwarding {
    const known = this.known.get(envelope.id);
    if (known === 'receipt') {
      if (!redelivery) return 'duplicate';
      this.pending.push({ envelope, redelivery, forwarded: false });
      return 'settle-later';
    }
    if (known === 'dead-letter' && !redelivery) return 'left-dead-lettered';
    return 'forward';
  }

  /** The event reached its destination: its receipt is claimed when the batch settles. */
  forwarded(envelope: EventEnvelope, redelivery: boolean): void {
    this.known.set(envelope.id, 'receipt');
    this.pending.push({ envelope, redelivery, forwarded: true });
  }

  /** The event failed every attempt and is dead-lettered now. */
  deadLettered(envelope: EventEnvelope): void {
    this.known.set(envelope.id, 'dead-letter');
  }

  /** Claims the receipts of what was forwarded and resolves the dead letters of forwarded redeliveries; returns their outcomes. */
  async settle(): Promise<SettledOutcome[]> {
    const pending = this.pending;
    this.pending = [];
    const outcomes: SettledOutcome[] = [];
    const now = new Date();
    for (const [tenantId, ofTenant] of byTenant(pending, (entry) => entry.envelope)) {
      const claims = ofTenant.filter((entry) => entry.forwarded).map(({ envelope }) => ({
        eventId: envelope.id, expiresAt: receiptExpiry(envelope.type, now, this.dedupHours),
      }));
      const redelivered = ofTenant.filter((entry) => entry.redelivery).map((entry) => entry.envelope.id);
      const resolved = await settleForwarded(this.statements, tenantId, this.groupId, claims, redelivered);
      for (const { envelope, redelivery, forwarded } of ofTenant) {
        if (redelivery && resolved.delete(envelope.id)) outcomes.push('resolved');
        else outcomes.push(forwarded ? 'handled' : 'duplicate');
      }
    }
    return outcomes;
  }
}

function byTenant<T>(items: readonly T[], envelopeOf: (item: T) => EventEnvelope): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const { tenantId } = envelopeOf(item);
    const group = groups.get(tenantId);
    if (group) group.push(item);
    else groups.set(tenantId, [item]);
  }
  return groups;
}
