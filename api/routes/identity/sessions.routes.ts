import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { endOtherSessions, endSession, listSessions, MAX_LISTED_SESSIONS } from '../../../services/identity/user-sessions';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { sessionIdParams, sessionList, type SessionIdParams } from './sessions.schemas';

/** What ending a session means on every gateway: said by both DELETE routes. */
const ENDING = 'Its refresh token is refused at once, and its access tokens answer 401 on every gateway within about a second '
  + '(docs/decisions/identity.md, Instant revocation and sessions). Writes auth.user.logged_out and an audit record.';

/**
 * The caller's own sessions (a session is a login and its refreshes, one refresh-token family):
 * list them, end one, end every other. Each user manages only their own, so no permission is needed.
 */
export function sessionRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/auth/sessions', operationId: 'iam.auth.sessions.list',
      summary: 'The current user\'s sessions in the current tenant',
      description: `The live sessions (not ended, refresh token not expired), most recently used first, at most ${MAX_LISTED_SESSIONS}. `
        + 'Impersonation sessions are not listed.',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { response: { 200: sessionList } },
      async handler(ctx) {
        ctx.body = { data: await listSessions(deps, authOf(ctx)) };
      },
    }),
    defineRoute<SessionIdParams>({
      namespace: 'iam', method: 'DELETE', path: '/auth/sessions/:id', operationId: 'iam.auth.sessions.end',
      summary: 'Ends one of the current user\'s sessions',
      description: `The current session may be ended too (as a logout). ${ENDING} An id that is not a live session of the `
        + 'current user (another user\'s included) is 404 not-found.',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { params: sessionIdParams, response: { 204: null } },
      async handler(ctx) {
        await endSession(deps, authOf(ctx), ctx.guard.params.id);
        ctx.status = 204;
      },
    }),
    defineRoute({
      namespace: 'iam', method: 'DELETE', path: '/auth/sessions', operationId: 'iam.auth.sessions.endOthers',
      summary: 'Ends every session of the current user but the current one',
      description: `Only in the current tenant. ${ENDING} Without other sessions nothing changes.`,
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { response: { 204: null } },
      async handler(ctx) {
        await endOtherSessions(deps, authOf(ctx));
        ctx.status = 204;
      },
    }),
  ];
}
