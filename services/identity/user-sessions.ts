import { currentRequestContext, type AuthState } from '../../common/context';
import { problems } from '../../common/problems';
import type { DatabasePool, DatabaseTransactionConnection } from '../../db/pool';
import { endSessions, isSessionLive, selectSessions } from '../../db/queries/identity/sessions.queries';
import { withTenant } from '../../db/tenant';
import { recordAudit } from '../audit/writer';
import type { IdentityDeps } from './deps';
import { enqueueAuthEvent } from './events';

/** GET /auth/sessions: one of the caller's sessions, `current` when the request's access token belongs to it. */
export interface SessionView {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

/** The channel migration 0039 announces every ended session on, with its id (the family id). */
export const SESSION_REVOCATIONS_CHANNEL = 'session_revocations';

/**
 * The sessions of every tenant that ended within the last `seconds`: what a gateway that starts, or
 * listens again after a gap, must refuse although it heard no announcement of it.
 */
export { selectRecentlyEndedSessions as recentlyEndedSessions } from '../../db/queries/identity/sessions.queries';

/**
 * Whether a session may still be used (it has tokens and none was revoked), read in the tenant's
 * transaction: the gateway asks per request while it does not hear the announcements.
 */
export function isLiveSession(db: DatabasePool, tenantId: string, sessionId: string): Promise<boolean> {
  return withTenant(db, tenantId, (tx) => isSessionLive(tx, tenantId, sessionId));
}

/** More would be sessions nobody ends by hand; the oldest beyond it still end with their refresh token. */
export const MAX_LISTED_SESSIONS = 100;

/**
 * The caller's live sessions in the caller's tenant (sessions, like refresh tokens, belong to a
 * tenant), the most recently used first.
 */
export function listSessions(deps: IdentityDeps, auth: AuthState): Promise<SessionView[]> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    const rows = await selectSessions(tx, auth.tenantId, auth.userId, MAX_LISTED_SESSIONS);
    return rows.map((row) => ({ ...row, current: row.id === auth.sessionId }));
  });
}

/**
 * DELETE /auth/sessions/:id: ends one of the caller's sessions. Its refresh token is refused from
 * the commit on, and its access tokens as soon as each gateway heard PostgreSQL announce it
 * (migration 0039). Any id that is not a live session of the caller (another user's included) is
 * 404. The event is logout's (auth.user.logged_out), naming the session and who ended it.
 */
export async function endSession(deps: IdentityDeps, auth: AuthState, sessionId: string): Promise<void> {
  await withTenant(deps.db, auth.tenantId, async (tx) => {
    if (await endSessions(tx, auth.tenantId, auth.userId, { only: sessionId }) === 0) throw problems.notFound('session');
    await recordSessionsEnded(tx, auth, { sessionId });
  });
}

/** DELETE /auth/sessions: ends every session of the caller in the tenant but the request's own; answers how many. */
export async function endOtherSessions(deps: IdentityDeps, auth: AuthState): Promise<number> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    const ended = await endSessions(tx, auth.tenantId, auth.userId, { except: auth.sessionId ?? null });
    if (ended > 0) await recordSessionsEnded(tx, auth, { others: ended });
    return ended;
  });
}

/** The event and audit record of sessions ended by their user (one by id, or the count of the others), in the transaction that ended them. */
async function recordSessionsEnded(tx: DatabaseTransactionConnection, auth: AuthState, ended: { sessionId: string } | { others: number }): Promise<void> {
  const one = 'sessionId' in ended;
  const detail = one ? { session_id: ended.sessionId } : { other_sessions: ended.others };
  const context = currentRequestContext();
  await enqueueAuthEvent(tx, 'auth.user.logged_out', auth.tenantId, auth.userId, { logged_out_at: new Date().toISOString(), ...detail });
  await recordAudit(tx, {
    tenantId: auth.tenantId,
    source: 'identity',
    action: one ? 'auth.session.ended' : 'auth.sessions.ended',
    entityType: one ? 'session' : 'user',
    entityId: one ? ended.sessionId : auth.userId,
    actorId: auth.userId,
    actorIp: context?.client?.ip ?? null,
    actorUserAgent: context?.client?.userAgent ?? null,
    before: null,
    after: null,
    meta: { currentSessionId: auth.sessionId ?? null, ...(one ? {} : { count: ended.others }) },
    traceId: context?.traceId,
  });
}
