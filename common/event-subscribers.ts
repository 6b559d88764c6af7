import type { DataValues } from './data-hooks';

/**
 * The contract between the platform and the event subscribers a module ships
 * (`modules/<slug>/subscribers.ts`, exporting `subscribers`; docs/decisions/events.md, Consumer
 * groups). Like the hook contract (common/data-hooks.ts), a module's code imports nothing of the
 * platform but this file, the hook contract and the problem registry: what it may do is what the
 * context below offers, and the platform runs it as a consumer group of the worker.
 */

/** The event as it was published (the envelope of docs/reference/events.md#rule-1); `data` is its typed payload. */
export interface SubscribedEvent {
  id: string;
  type: string;
  source: string;
  tenantId: string;
  data: Readonly<Record<string, unknown>>;
  schemaVersion: string;
  timestamp: string;
  traceId: string | null;
  correlationId: string | null;
}

/**
 * What a subscriber may do, all of it in the transaction that records the event as handled: the
 * event takes effect once and only once, and a throw undoes everything it wrote (the attempt failed).
 */
export interface SubscriberContext {
  tenantId: string;
  /**
   * Creates a record of one of the module's own models through the data layer: the model's checks,
   * the module's before hooks, the plan's `records` limit, the change event and the audit record,
   * as POST /data/{module}/{model} would (the platform, not a user, writes it). Resolves with the
   * record as GET answers it; a refusal throws its problem.
   */
  createRecord(model: string, values: Readonly<Record<string, unknown>>): Promise<DataValues>;
}

/**
 * One consumer group of the module: `<module>.<name>` (the `<module>.<handler>` of docs/reference/events.md#rule-13).
 * It receives the event types it lists, each of which its manifest must declare in
 * `events.subscribes`, all on one topic; only for tenants that have the module installed and active,
 * and only events that happened while it was (a user created before the install is not its business).
 * A throw fails the attempt; after BROKER_MAX_ATTEMPTS failures the event is dead-lettered.
 */
export interface ModuleSubscriber {
  /** The handler name: lower case, `[a-z][a-z0-9_-]*`. */
  name: string;
  events: readonly string[];
  handle: (event: SubscribedEvent, context: SubscriberContext) => Promise<void>;
}
