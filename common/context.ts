import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who a unit of work runs for and which trace it belongs to. The gateway's middleware opens one per
 * request from the verified token; whatever the request starts (SQL, Temporal workflows, events)
 * reads it here instead of having it threaded through every call.
 */
export interface RequestContext {
  traceId: string;
  /** Absent before a tenant is known (registration, login, one-time-token redemption). */
  tenantId?: string;
  /** The user the request acts as. */
  actorId?: string;
  /** The Platform Owner behind an impersonation token; the audit trail names both. */
  impersonatorId?: string;
  /**
   * The request's client address (after the trusted proxies) and User-Agent: a session opened or
   * refreshed by the request records them for the session list. Sessions are opened by many flows
   * (login, registration, invitations, provider sign-in, recovery, refresh), so they read it here.
   */
  client?: { ip: string | null; userAgent: string | null };
}

const storage = new AsyncLocalStorage<Readonly<RequestContext>>();

/** Runs `fn` with `context` as the current request context of everything it awaits. */
export function runWithRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(Object.freeze({ ...context }), fn);
}

/** The context of the request being served, or undefined outside one (start-up, schedules). */
export function currentRequestContext(): Readonly<RequestContext> | undefined {
  return storage.getStore();
}

/** Who made a change, as the audit record names them. */
export interface Actor {
  userId: string;
  ip: string | null;
  userAgent: string | null;
}

/**
 * The caller of a route: the token's tenant and user, with what the audit record keeps of the request.
 * Every domain that audits a caller's change takes it, so it lives here rather than in one of them.
 */
export interface Caller extends Actor {
  tenantId: string;
}

/** Who a bearer route's request acts as, from the verified access token. */
export interface AuthState {
  userId: string;
  tenantId: string;
  email: string;
  /** Role names only; permissions are resolved per request, never taken from the token. */
  roles: string[];
  /** Set only under an impersonation token: the Platform Owner acting as this user (`act.sub`). */
  impersonatorId?: string;
  /** The session (refresh-token family) of the access token (`sid`); absent for callers without a session. */
  sessionId?: string;
  /**
   * When the sign-in behind the session proved a credential (the token's `auth_time`, seconds since the
   * epoch); absent for API keys, which sign in to nothing. Routes of high-value actions require it recent.
   */
  authTime?: number;
  /**
   * Whether the account had two-factor on when the token was issued (the token's `mfa`); absent for API keys
   * and for tokens signed before the claim. REQUIRE_MFA_FOR_ADMINS reads it (docs/reference/identity.md#rule-48).
   */
  mfa?: boolean;
  /**
   * Set only for a request authenticated by an API key (a service account): the key acts with exactly
   * these permissions, never through roles. `userId` is then its actor id `apikey:<id>` (apiKeyActorId),
   * so every audit record and event names the key; `email` and `roles` are empty.
   */
  apiKey?: { id: string; permissions: readonly string[] };
}

const API_KEY_ACTOR = 'apikey:';

/** How audit records, events and `created_by` columns name an API key acting (docs/decisions/identity.md, API keys). */
export function apiKeyActorId(keyId: string): string {
  return `${API_KEY_ACTOR}${keyId}`;
}

/**
 * The account behind an actor id, for columns that reference users (roles.created_by,
 * tenant_modules.installed_by, files.uploaded_by): null for an API key, which is no account.
 */
export function accountIdOf(actorId: string): string | null {
  return actorId.startsWith(API_KEY_ACTOR) ? null : actorId;
}
