/**
 * What long work reports as it advances (a batch done, a running total). A service that runs for
 * minutes takes one so its caller can show it is alive: an activity heartbeats each report, which
 * is also how Temporal delivers a cancellation to it. The service knows nothing of Temporal.
 */
export type Progress = (details: unknown) => void;
