// The tour's two patiences, shared by its HTTP, Mailpit and gRPC clients and its polls.

// One request or RPC without an answer for this long fails its step.
export const REQUEST_TIMEOUT_MS = 30_000;
// How long the platform's asynchronous work may take before a step says it did not happen: the mail
// path (Temporal → SMTP → Mailpit), the malware scan, the workflows of jobs, the outbox relay and
// the audit consumer.
export const WAIT_MS = 60_000;
