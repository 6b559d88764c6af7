import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { requestVerificationEmail, verifyEmail } from '../../../services/identity/email-verification';
import { acceptInvite, invite, type AcceptInviteRequest, type InviteRequest } from '../../../services/identity/invitations';
import { changePassword, type PasswordChange } from '../../../services/identity/change-password';
import { requestPasswordReset, resetPassword } from '../../../services/identity/password-reset';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import {
  acceptInviteBody, acceptInviteResponse, changePasswordBody, emailVerifiedResponse, invitationResponse, inviteBody, requestResetBody,
  resetPasswordBody, resetPasswordResponse, tokenBody, type RequestResetBody, type ResetPasswordBody, type TokenBody,
} from './security.schemas';

type NoParams = Record<string, never>;

/**
 * 202 with an empty body. Koa would otherwise write its status text ("Accepted"); a null body set
 * before the status marks the body as deliberately empty (Content-Length 0).
 */
function acceptedWithoutBody(ctx: { body: unknown; status: number }): void {
  ctx.body = null;
  ctx.status = 202;
}

/** Security flows (namespace iam; docs/reference/identity.md, Rules: e-mail links, and #rule-44). The flows live in services/identity/; mail goes through Temporal. */
export function securityRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute({
      namespace: 'iam', method: 'POST', path: '/auth/request-verify-email', operationId: 'iam.auth.requestVerifyEmail',
      summary: 'Sends a new e-mail verification link',
      description: 'At most 3 per hour per user (429 rate-limit-exceeded with Retry-After after that). '
        + 'A verified address gets no mail; the answer is the same.',
      auth: 'bearer',
      schemas: { response: { 202: null } },
      async handler(ctx) {
        await requestVerificationEmail(deps, authOf(ctx));
        acceptedWithoutBody(ctx);
      },
    }),
    defineRoute<NoParams, NoParams, TokenBody>({
      namespace: 'iam', method: 'POST', path: '/auth/verify-email', operationId: 'iam.auth.verifyEmail',
      summary: 'Confirms an e-mail address with the token of its link',
      description: 'The token works once; an expired one is 401 token-expired, an unknown or used one 401 unauthorized.',
      auth: 'public',
      schemas: { body: tokenBody, response: { 200: emailVerifiedResponse } },
      async handler(ctx) {
        ctx.body = await verifyEmail(deps, ctx.guard.body.token);
      },
    }),
    defineRoute<NoParams, NoParams, RequestResetBody>({
      namespace: 'iam', method: 'POST', path: '/auth/request-reset', operationId: 'iam.auth.requestReset',
      summary: 'Sends a password reset link if the address has an account',
      description: 'Always 202 without a body, in the same time whether or not the address exists.',
      auth: 'public',
      schemas: { body: requestResetBody, response: { 202: null } },
      handler(ctx) {
        requestPasswordReset(deps, ctx.guard.body.email);
        acceptedWithoutBody(ctx);
      },
    }),
    defineRoute<NoParams, NoParams, ResetPasswordBody>({
      namespace: 'iam', method: 'POST', path: '/auth/reset-password', operationId: 'iam.auth.resetPassword',
      summary: 'Sets a new password with the token of a reset or set-password link',
      description: 'The password must have 12+ characters and not be a known breached one. Every session of the account, '
        + 'in every tenant, is signed out.',
      auth: 'public',
      schemas: { body: resetPasswordBody, response: { 200: resetPasswordResponse } },
      async handler(ctx) {
        ctx.body = await resetPassword(deps, ctx.guard.body.token, ctx.guard.body.password);
      },
    }),
    defineRoute<NoParams, NoParams, PasswordChange>({
      namespace: 'iam', method: 'POST', path: '/auth/change-password', operationId: 'iam.auth.changePassword',
      summary: 'Changes the password of the signed-in account',
      description: 'Takes the current password and the new one (12+ characters, not a known breached one), and with '
        + 'two-factor on a current code (without it 401 mfa-required, a wrong or used one 401 mfa-invalid). A wrong '
        + 'current password is 401 invalid-credentials; wrong passwords and codes count as failed logins (429 with '
        + 'Retry-After when the account is slowed). Every other session of the account, in every tenant, is signed '
        + 'out; this one stays. The holder is told by e-mail. An API key cannot call it (403).',
      auth: 'bearer',
      schemas: { body: changePasswordBody, response: { 204: null } },
      async handler(ctx) {
        await changePassword(deps, authOf(ctx), ctx.guard.body, ctx.ip);
        ctx.status = 204;
      },
    }),
    defineRoute<NoParams, NoParams, InviteRequest>({
      namespace: 'iam', method: 'POST', path: '/auth/invite', operationId: 'iam.auth.invite',
      summary: 'Invites someone to the current tenant by e-mail',
      description: 'Roles by role_id or by name (roles); neither means member. An address that already is an active member '
        + 'gets a notice instead, and the answer is 202 without a body. A deleted member is 409 conflict: restore them with '
        + 'PATCH /users/{id}/restore instead.',
      auth: 'bearer',
      permission: 'users.create',
      billing: { creates: 'users' },
      // The invitation, or no body at all for an existing member (then the body is null).
      schemas: { body: inviteBody, response: { 202: invitationResponse.allow(null) } },
      async handler(ctx) {
        const invitation = await invite(deps, authOf(ctx), ctx.guard.body);
        if (invitation) {
          ctx.body = invitation;
          ctx.status = 202;
        } else {
          acceptedWithoutBody(ctx);
        }
      },
    }),
    defineRoute<NoParams, NoParams, AcceptInviteRequest>({
      namespace: 'iam', method: 'POST', path: '/auth/accept-invite', operationId: 'iam.auth.acceptInvite',
      summary: 'Accepts an invitation: creates the account (or adds the membership) and signs in',
      description: 'For an address that already has an account, its current password must be given; it is not changed.',
      auth: 'public',
      schemas: { body: acceptInviteBody, response: { 201: acceptInviteResponse } },
      async handler(ctx) {
        ctx.body = await acceptInvite(deps, ctx.guard.body, ctx.ip);
        ctx.status = 201;
      },
    }),
  ];
}
