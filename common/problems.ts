/**
 * The closed registry of problem types (RFC 9457). Every error the platform answers with is built
 * here, so a type suffix, its status and its title are written once. Routes throw
 * `problems.notFound(...)`; the problem middleware renders it with `type`, `instance` and `traceId`.
 */

export interface FieldError {
  field: string;
  message: string;
  code: string;
}

export interface PlanLimit {
  resource: string;
  allowed: number;
  current: number;
  planId: string;
}

/** Members beyond the standard five that some problem types carry (docs/reference/conventions.md#rule-17). */
export interface ProblemExtensions {
  errors?: FieldError[];
  retryAfter?: number;
  limit?: PlanLimit;
  code?: string;
  // The standard members are the builder's own (STANDARD_MEMBERS below).
  type?: never;
  title?: never;
  status?: never;
  detail?: never;
  instance?: never;
  traceId?: never;
  [member: string]: unknown;
}

const registry = {
  'validation-error': { status: 400, title: 'Validation error' },
  'unauthorized': { status: 401, title: 'Unauthorized' },
  'token-expired': { status: 401, title: 'Token expired' },
  'invalid-credentials': { status: 401, title: 'Invalid credentials' },
  'mfa-required': { status: 401, title: 'Two-factor code required' },
  'mfa-invalid': { status: 401, title: 'Two-factor code invalid' },
  // Step-up (RFC 9470's insufficient_user_authentication): the token is valid but its sign-in too old for the action.
  'reauthentication-required': { status: 401, title: 'Recent sign-in required' },
  'forbidden': { status: 403, title: 'Forbidden' },
  // REQUIRE_MFA_FOR_ADMINS: a member holding management permissions has not turned two-factor on yet.
  'mfa-enrollment-required': { status: 403, title: 'Two-factor enrolment required' },
  'account-locked': { status: 403, title: 'Account locked' },
  'not-found': { status: 404, title: 'Not found' },
  'module-not-found': { status: 404, title: 'Module not installed' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'conflict': { status: 409, title: 'Conflict' },
  'provider-already-linked': { status: 409, title: 'Provider identity linked to another user' },
  'last-provider': { status: 400, title: 'Cannot unlink the only sign-in method' },
  'rbac-limit-exceeded': { status: 400, title: 'Role or permission limit exceeded' },
  'idempotency-conflict': { status: 409, title: 'Idempotency key reused with another request' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'rate-limit-exceeded': { status: 429, title: 'Rate limit exceeded' },
  'internal-error': { status: 500, title: 'Internal error' },
  'bad-gateway': { status: 502, title: 'Bad gateway' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
  'gateway-timeout': { status: 504, title: 'Gateway timeout' },
  // Audit (docs/reference/audit.md#errors). cold-export-initiated is a 202 answer, not a problem.
  'audit-record-not-found': { status: 404, title: 'Audit record not found' },
  'batch-limit-exceeded': { status: 400, title: 'Batch limit exceeded' },
  'export-range-too-large': { status: 400, title: 'Export range too large' },
  'anonymize-financial-record': { status: 403, title: 'Financial records cannot be anonymized' },
  'anonymize-conflict': { status: 409, title: 'Anonymization already in progress' },
  // Money (docs/reference/money.md#errors).
  'insufficient-funds': { status: 400, title: 'Insufficient funds' },
  'invalid-amount': { status: 400, title: 'Invalid amount' },
  'hold-limit-exceeded': { status: 429, title: 'Too many open holds' },
  'hold-expired': { status: 422, title: 'Hold expired' },
  // docs/reference/money.md#rule-8: a canceled (or confirmed) hold cannot be confirmed or canceled again.
  'hold-settled': { status: 400, title: 'Hold already confirmed or canceled' },
  'hold-not-reversible': { status: 400, title: 'A held transaction cannot be reversed' },
  'double-reversal': { status: 400, title: 'Transaction already reversed' },
  'reversal-window-expired': { status: 400, title: 'Reversal window expired' },
  'billing-unavailable': { status: 503, title: 'Billing unavailable' },
  // Billing limits (docs/reference/billing.md, Rules: enforcement).
  'plan-limit-exceeded': { status: 402, title: 'Plan limit exceeded' },
  'subscription-suspended': { status: 402, title: 'Subscription suspended' },
  'subscription-terminated': { status: 402, title: 'Subscription terminated' },
  'transaction-not-reversible': { status: 400, title: 'Transaction cannot be reversed' },
  // Billing, subscriptions and webhooks (docs/reference/billing.md#errors).
  'optimistic-lock-conflict': { status: 409, title: 'Optimistic lock conflict' },
  'plan-change-in-progress': { status: 409, title: 'Plan change in progress' },
  'invalid-transition': { status: 422, title: 'Invalid subscription transition' },
  'webhook-signature-invalid': { status: 401, title: 'Webhook signature invalid' },
  // Data layer (docs/reference/data.md, Errors and Limits).
  'filter-limit-exceeded': { status: 400, title: 'Too many filters' },
  'relations-depth-exceeded': { status: 400, title: 'Relations nested too deeply' },
  // Files (docs/reference/files.md#errors).
  'file-not-found': { status: 404, title: 'File not found' },
  'file-rejected': { status: 422, title: 'File rejected' },
  'bucket-invalid': { status: 400, title: 'Invalid bucket' },
  'staging-limit-exceeded': { status: 503, title: 'Staging limit exceeded' },
  'processing-failed': { status: 422, title: 'Image processing failed' },
  'preset-not-found': { status: 404, title: 'Thumbnail preset not found' },
  'file-not-deleted': { status: 400, title: 'File not deleted' },
  'file-restore-expired': { status: 410, title: 'File restore window expired' },
  // Event bus (docs/reference/events.md#errors): each also carries the code the reference names as `code`.
  'event-not-declared': { status: 403, title: 'Event type not declared by the module' },
  'event-topic-protected': { status: 403, title: 'Kernel event namespace' },
  'event-payload-too-large': { status: 400, title: 'Event payload too large' },
  'invalid-schema-version': { status: 400, title: 'Invalid schema version' },
  'events-broker-unavailable': { status: 503, title: 'Event broker unavailable' },
  'event-schema-incompatible': { status: 409, title: 'Event schema change not backward compatible' },
  // The FAILED_PRECONDITION of DLQRetry (docs/reference/events.md#rule-17); over REST a business rule is 400 (docs/decisions/events.md).
  'dead-letter-not-retryable': { status: 400, title: 'Dead letter already resolved or expired' },
  // gRPC consumer groups (docs/reference/events.md#rule-13; docs/decisions/events.md, gRPC consumer-group RPCs).
  'event-subscribe-not-declared': { status: 403, title: 'Event type not declared for subscription by the module' },
  // The OUT_OF_RANGE of ReplayFrom (docs/reference/events.md#rule-20; 400 over REST, as a business rule is answered).
  'replay-out-of-range': { status: 400, title: 'Replay outside the retention window' },
  // FAILED_PRECONDITION over gRPC: the group reads another topic, or has members elsewhere.
  'consumer-group-conflict': { status: 409, title: 'Consumer group in use' },
  // Outbound webhooks (issue 35): a URL the platform will not send to (services/events/webhooks/url-policy.ts).
  'webhook-url-not-allowed': { status: 400, title: 'Webhook URL not allowed' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemType = keyof typeof registry;

/**
 * The members every problem body has (RFC 9457's five, and the trace id the handler adds). An
 * extension may never overwrite one: a body whose `status` is not the HTTP status misleads every
 * client that reads it, so such an extension is named for what it is (`holdStatus`).
 */
const STANDARD_MEMBERS: ReadonlySet<string> = new Set(['type', 'title', 'status', 'detail', 'instance', 'traceId']);

export class Problem extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly type: ProblemType,
    readonly detail: string,
    readonly extensions: ProblemExtensions = {},
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    const clash = Object.keys(extensions).filter((member) => STANDARD_MEMBERS.has(member));
    if (clash.length > 0) throw new TypeError(`problem ${type}: extension members ${clash.join(', ')} would overwrite standard members`);
    this.name = 'Problem';
    this.status = registry[type].status;
    this.title = registry[type].title;
  }

  /** The RFC 9457 body; `instance` and `traceId` come from the request being answered. */
  toJSON(base: string, instance: string, traceId: string): Record<string, unknown> {
    return {
      type: `${base}/${this.type}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      instance,
      traceId,
      ...this.extensions,
    };
  }
}

export function isProblem(value: unknown): value is Problem {
  return value instanceof Problem;
}

/**
 * 5xx types that are the service's deliberate answer, not its failure: a tenant's full staging
 * area (503 staging-limit-exceeded) says the service works as designed. They neither count against
 * the gateway's circuit breakers (one tenant at its cap would otherwise close the route for all)
 * nor are logged as errors.
 */
const DELIBERATE_UNAVAILABILITY: ReadonlySet<ProblemType> = new Set(['staging-limit-exceeded']);

/** Whether a problem means the service failed (a 5xx that is not a deliberate answer). */
export function isServiceFailure(problem: Problem): boolean {
  return problem.status >= 500 && !DELIBERATE_UNAVAILABILITY.has(problem.type);
}

/** Builders, one per type; callers never spell a suffix themselves. */
export const problems = {
  validation: (errors: FieldError[], detail = 'The request does not match its schema') =>
    new Problem('validation-error', detail, { errors }),
  unauthorized: (detail = 'A valid bearer token is required') => new Problem('unauthorized', detail),
  tokenExpired: (detail = 'The token has expired') => new Problem('token-expired', detail),
  // One answer for an unknown e-mail, a wrong password and a deleted account, so none is told apart.
  invalidCredentials: () => new Problem('invalid-credentials', 'The e-mail address or password is wrong'),
  mfaRequired: () => new Problem('mfa-required', 'Two-factor authentication is on; send mfaCode'),
  mfaInvalid: () => new Problem('mfa-invalid', 'The two-factor code is wrong or expired'),
  /** `maxAge`: the seconds a sign-in stays recent enough (STEP_UP_MAX_AGE_SECONDS); a new sign-in is the way to step up. */
  reauthenticationRequired: (maxAge: number) => new Problem('reauthentication-required',
    `This action needs a sign-in within the last ${maxAge} s; sign in again (POST /auth/login) and repeat it`, { maxAge }),
  // A provider sign-in cannot be repeated with a code: the challenge token carries it to POST /auth/mfa/challenge.
  mfaChallenge: (mfaToken: string, expiresAt: string) => new Problem('mfa-required',
    'Two-factor authentication is on; send mfaToken with mfaCode or recoveryCode to POST /auth/mfa/challenge', { mfaToken, expiresAt }),
  accountLocked: () => new Problem('account-locked', 'The account is locked; contact your administrator'),
  forbidden: (detail = 'You do not have permission for this action') => new Problem('forbidden', detail),
  /** The remedy is in the detail: enrol, then refresh, since the token says whether two-factor was on when it was issued. */
  mfaEnrollmentRequired: () => new Problem('mfa-enrollment-required',
    'Your role manages this tenant, which requires two-factor authentication: turn it on (POST /auth/mfa/enable, then '
    + 'POST /auth/mfa/verify), then refresh the token (POST /auth/refresh) or sign in again'),
  notFound: (what = 'resource') => new Problem('not-found', `The ${what} was not found`),
  routeNotFound: (path: string) => new Problem('not-found', `No route matches ${path}`),
  moduleNotFound: (slug: string) => new Problem('module-not-found', `Module ${slug} is not installed for this tenant`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new Problem('method-not-allowed', `${method} is not allowed here; allowed: ${allowed.join(', ')}`, { allowed }),
  conflict: (detail: string) => new Problem('conflict', detail),
  providerAlreadyLinked: (provider: string) =>
    new Problem('provider-already-linked', `This ${provider} identity is already linked to another user`),
  lastProvider: () =>
    new Problem('last-provider', 'This is the only way to sign in to the account; add a password or another provider first'),
  rbacLimitExceeded: (detail: string) => new Problem('rbac-limit-exceeded', detail),
  idempotencyConflict: () =>
    new Problem('idempotency-conflict', 'This Idempotency-Key was used with a different request body'),
  payloadTooLarge: (limit: string) => new Problem('payload-too-large', `The request body exceeds ${limit}`),
  unsupportedMediaType: (type: string, expected = 'application/json') =>
    new Problem('unsupported-media-type', `Content-Type ${type || '(none)'} is not accepted; send ${expected}`),
  rateLimited: (retryAfter: number) =>
    new Problem('rate-limit-exceeded', `Too many requests; retry after ${retryAfter} s`, { retryAfter }),
  /** Admission of workflow-backed money requests (services/money/admission.ts): the tenant's in-flight bound. */
  moneyInFlightLimit: (max: number, retryAfter: number) => new Problem('rate-limit-exceeded',
    `This tenant already has ${max} holds, transfers, confirms or cancels in flight; retry after ${retryAfter} s`, { retryAfter, max }),
  internal: (cause?: unknown) => new Problem('internal-error', 'An unexpected error occurred', {}, { cause }),
  /** The error of a job (GET /v1/jobs/{jobId}) whose workflow failed; its own message stays in Temporal. */
  jobFailed: (what: string) => new Problem('internal-error', `The ${what} did not complete; start it again`),
  badGateway: (detail: string) => new Problem('bad-gateway', detail),
  unavailable: (detail: string, cause?: unknown, retryAfter?: number) => new Problem('service-unavailable', detail, retryAfter === undefined ? {} : { retryAfter }, { cause }),
  timeout: (detail: string) => new Problem('gateway-timeout', detail),
  auditRecordNotFound: (id: string) => new Problem('audit-record-not-found', `Audit record ${id} was not found`),
  batchLimitExceeded: (max: number, given: number) =>
    new Problem('batch-limit-exceeded', `A batch holds at most ${max} records; ${given} were sent`, { max, given }),
  exportRangeTooLarge: (maxDays: number) =>
    new Problem('export-range-too-large', `A hot export covers at most ${maxDays} days; narrow since and until`, { maxDays }),
  anonymizeFinancialRecord: () =>
    new Problem('anonymize-financial-record', 'Financial (money.*) audit records are never anonymized'),
  insufficientFunds: (available: number, requested: number) =>
    new Problem('insufficient-funds', `Available balance ${available} is below ${requested}`, { available, requested }),
  invalidAmount: (detail = 'amount must be a positive integer in minor units') => new Problem('invalid-amount', detail),
  holdLimitExceeded: (max: number) =>
    new Problem('hold-limit-exceeded', `A wallet can have at most ${max} open holds`, { retryAfter: 60 }),
  holdExpired: (holdId: string) => new Problem('hold-expired', `Hold ${holdId} expired and its funds were released`),
  holdSettled: (holdId: string, holdStatus: string) =>
    new Problem('hold-settled', `Hold ${holdId} is already ${holdStatus}`, { holdStatus }),
  holdNotReversible: () => new Problem('hold-not-reversible', 'A held transaction is released by cancel, not reversed'),
  doubleReversal: (id: string) => new Problem('double-reversal', `Transaction ${id} is already reversed`),
  reversalWindowExpired: (maxDays: number) =>
    new Problem('reversal-window-expired', `Only transactions of the last ${maxDays} days can be reversed`),
  billingUnavailable: () => new Problem('billing-unavailable', 'Plan limits cannot be read right now; try again later'),
  emailNotVerified: () => new Problem('forbidden',
    'Moving money requires a verified e-mail address; confirm it with the link sent by POST /auth/request-verify-email',
    { code: 'email-not-verified' }),
  transactionNotReversible: (id: string, type: string, status: string) =>
    new Problem('transaction-not-reversible', `Transaction ${id} (${type}, ${status}) cannot be reversed; only a completed debit or a confirmed hold can`),
  anonymizeConflict: (userId: string) =>
    new Problem('anonymize-conflict', `An anonymization of user ${userId} is already in progress`),
  /** `extra`: the money limits also carry maxTxAmount / maxBalance beside the limit object (docs/reference/money.md#rule-11). */
  planLimitExceeded: (
    limit: PlanLimit,
    extra: ProblemExtensions = {},
    detail = `The plan ${limit.planId} allows ${limit.allowed} ${limit.resource}; ${limit.current} in use`,
  ) => new Problem('plan-limit-exceeded', detail, { limit, ...extra }),
  subscriptionSuspended: () =>
    new Problem('subscription-suspended', 'The subscription is suspended for non-payment: data can be read but not changed'),
  subscriptionTerminated: () =>
    new Problem('subscription-terminated', 'The subscription is terminated; contact the platform to recover the tenant'),
  optimisticLockConflict: (current: number) =>
    new Problem('optimistic-lock-conflict', `The subscription has changed; its current version is ${current}`, { currentVersion: current }),
  planChangeInProgress: () =>
    new Problem('plan-change-in-progress', 'A plan change is already pending; cancel it or wait for the next billing cycle'),
  invalidTransition: (detail: string) => new Problem('invalid-transition', detail),
  webhookSignatureInvalid: (detail = 'The webhook signature is missing or does not match') =>
    new Problem('webhook-signature-invalid', detail),
  filterLimitExceeded: (max: number, given: number) =>
    new Problem('filter-limit-exceeded', `A request holds at most ${max} filters; ${given} were sent`, { max, given }),
  relationsDepthExceeded: (max: number) =>
    new Problem('relations-depth-exceeded', `select= embeds relations at most ${max} levels deep`, { max }),
  /** Unknown ids, another tenant's files and files not (or no longer) readable all answer alike. */
  fileNotFound: (id: string) => new Problem('file-not-found', `File ${id} was not found`),
  fileRejected: (id: string) => new Problem('file-rejected', `File ${id} was rejected by the malware scan`),
  bucketInvalid: (buckets: readonly string[]) =>
    new Problem('bucket-invalid', `bucket must be one of ${buckets.join(', ')}`, { buckets: [...buckets] }),
  stagingLimitExceeded: (max: number) => new Problem('staging-limit-exceeded',
    `The tenant already has ${max} files waiting for their malware scan; retry when they are done`, { max, retryAfter: 30 }),
  /** An upload's file crossed its size limit (docs/reference/files.md#rule-4: images one, other files another). */
  fileTooLarge: (limitBytes: number, kind?: 'image' | 'document') => new Problem('payload-too-large',
    `${kind === 'image' ? 'An image' : kind === 'document' ? 'A file other than an image' : 'A file'} may be at most ${limitBytes} bytes`,
    { limitBytes }),
  processingFailed: (detail: string) => new Problem('processing-failed', detail),
  presetNotFound: (preset: string, presets: readonly string[]) =>
    new Problem('preset-not-found', `Unknown thumbnail preset ${preset}; presets: ${presets.join(', ')}`, { presets: [...presets] }),
  fileNotDeleted: (id: string) => new Problem('file-not-deleted', `File ${id} is not in the trash`),
  fileRestoreExpired: (id: string, days: number) =>
    new Problem('file-restore-expired', `File ${id} was deleted more than ${days} days ago and can no longer be restored`),
  eventNotDeclared: (module: string, event: string, why: string) => new Problem('event-not-declared',
    `Module ${module} may not publish ${event}: ${why}`, { code: 'EVENT_PUBLISH_FORBIDDEN', module, event }),
  eventTopicProtected: (module: string, event: string, owner: string) => new Problem('event-topic-protected',
    `Module ${module} may not publish ${event}: the namespace belongs to the ${owner} service`,
    { code: 'KERNEL_EVENT_PUBLISH_FORBIDDEN', module, event }),
  eventPayloadTooLarge: (limitBytes: number, size: number) => new Problem('event-payload-too-large',
    `The event payload is ${size} bytes; at most ${limitBytes} are accepted`, { code: 'EVENT_PAYLOAD_TOO_LARGE', limitBytes }),
  invalidSchemaVersion: (detail: string) => new Problem('invalid-schema-version', detail, { code: 'INVALID_SCHEMA_VERSION' }),
  /** docs/reference/events.md#rule-10: nothing is buffered, the caller decides between retry, dead-letter or drop. */
  eventsBrokerUnavailable: (cause: unknown) => new Problem('events-broker-unavailable',
    'The event broker is unavailable; nothing was published, retry with backoff', { code: 'events.broker.unavailable' }, { cause }),
  eventSchemaIncompatible: (reasons: readonly string[]) => new Problem('event-schema-incompatible',
    `An event schema cannot be registered: ${reasons.join('; ')}`, { reasons: [...reasons] }),
  /** A dead letter (or every dead letter of an event) that is resolved or expired: only pending and retrying ones are re-sent. */
  deadLetterNotRetryable: (what: string, deadLetterStatus: string) => new Problem('dead-letter-not-retryable',
    `${what} is ${deadLetterStatus}; only a pending or retrying dead letter can be retried`, { deadLetterStatus }),
  /** docs/reference/events.md#rule-13: a module subscribes only to the types its manifest lists in events.subscribes. */
  eventSubscribeNotDeclared: (module: string, topic: string, why: string) => new Problem('event-subscribe-not-declared',
    `Module ${module} may not subscribe to ${topic}: ${why}`, { module, topic }),
  /** docs/reference/events.md#rule-20: replay is bounded by the topic's retention (and cannot start in the future). */
  replayOutOfRange: (detail: string) => new Problem('replay-out-of-range', detail),
  consumerGroupConflict: (detail: string) => new Problem('consumer-group-conflict', detail),
  /** Not https, or a loopback, private or link-local target (server-side request forgery). */
  webhookUrlNotAllowed: (why: string) => new Problem('webhook-url-not-allowed', `The webhook URL ${why}`),
  /** Decided before the first byte is sent (docs/reference/data.md#rule-20: response body 1 MB), so no client reads half a body. */
  responseTooLarge: (limitBytes: number) => new Problem('payload-too-large',
    `The response would exceed ${limitBytes} bytes; ask for fewer records (page_size) or fewer fields (select)`, { limitBytes }),
};

/**
 * Downstream calls (gRPC, Temporal) fail with gRPC status codes; this table maps them to HTTP
 * (docs/decisions/gateway.md, Requests and errors). Codes without a mapping here are internal errors.
 */
const grpcMapping: Record<number, ProblemType> = {
  3: 'validation-error', // INVALID_ARGUMENT
  16: 'unauthorized', // UNAUTHENTICATED
  7: 'forbidden', // PERMISSION_DENIED
  5: 'not-found', // NOT_FOUND
  6: 'conflict', // ALREADY_EXISTS
  8: 'rate-limit-exceeded', // RESOURCE_EXHAUSTED
  13: 'internal-error', // INTERNAL
  14: 'service-unavailable', // UNAVAILABLE
  4: 'gateway-timeout', // DEADLINE_EXCEEDED
};

export function problemFromGrpc(code: number, detail: string): Problem {
  const type = grpcMapping[code] ?? 'internal-error';
  return type === 'internal-error' ? problems.internal(new Error(detail)) : new Problem(type, detail);
}
