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

/** Who a bearer route's request acts as, from the verified access token. */
export interface AuthState {
  userId: string;
  tenantId: string;
  email: string;
  /** Role names only; permissions are resolved per request, never taken from the token. */
  roles: string[];
  /** Set only under an impersonation token: the Platform Owner acting as this user (`act.sub`). */
  impersonatorId?: string;
}
