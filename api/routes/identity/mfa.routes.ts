import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { disableMfa, enableMfa, verifyMfa, type DisableRequest } from '../../../services/identity/mfa/enrollment';
import { completeMfaChallenge, type MfaChallengeRequest } from '../../../services/identity/mfa/challenge';
import { recover, type RecoveryRequest } from '../../../services/identity/mfa/recovery';
import { regenerateRecoveryCodes, remainingRecoveryCodes } from '../../../services/identity/mfa/recovery-codes';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { loginResponse, tokenPair } from './auth.schemas';
import {
  activatedResponse, disabledResponse, disableMfaBody, mfaChallengeBody, provisioningResponse, recoveryBody, regeneratedResponse,
  remainingResponse, verifyMfaBody, type VerifyMfaBody,
} from './mfa.schemas';

type NoParams = Record<string, never>;

/** Two-factor authentication (namespace iam; docs/reference/identity.md, Rules: two-factor and recovery). The flows live in services/identity/mfa/. */
export function mfaRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute({
      namespace: 'iam', method: 'POST', path: '/auth/mfa/enable', operationId: 'iam.auth.mfa.enable',
      summary: 'Starts two-factor setup: a new TOTP secret and its QR code',
      description: 'The secret stays pending until /auth/mfa/verify confirms a code of it. With two-factor already on: 409 conflict.',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { response: { 200: provisioningResponse } },
      async handler(ctx) {
        ctx.body = await enableMfa(deps, authOf(ctx));
      },
    }),
    defineRoute<NoParams, NoParams, VerifyMfaBody>({
      namespace: 'iam', method: 'POST', path: '/auth/mfa/verify', operationId: 'iam.auth.mfa.verify',
      summary: 'Confirms the setup with a code; activates two-factor',
      description: 'Answers 10 new recovery codes, shown only this once; earlier codes stop working. A wrong code is 401 mfa-invalid.',
      auth: 'bearer', allowedBeforeMfa: true,
      schemas: { body: verifyMfaBody, response: { 200: activatedResponse } },
      async handler(ctx) {
        ctx.body = await verifyMfa(deps, authOf(ctx), ctx.guard.body.code, ctx.ip);
      },
    }),
    defineRoute<NoParams, NoParams, DisableRequest>({
      namespace: 'iam', method: 'POST', path: '/auth/mfa/disable', operationId: 'iam.auth.mfa.disable',
      summary: 'Turns two-factor off with the current password and a current code',
      description: 'Shortly after a successful /auth/recovery (for the life of its access token) the password alone suffices.',
      auth: 'bearer',
      schemas: { body: disableMfaBody, response: { 200: disabledResponse } },
      async handler(ctx) {
        ctx.body = await disableMfa(deps, authOf(ctx), ctx.guard.body, ctx.ip);
      },
    }),
    defineRoute<NoParams, NoParams, MfaChallengeRequest>({
      namespace: 'iam', method: 'POST', path: '/auth/mfa/challenge', operationId: 'iam.auth.mfa.challenge',
      summary: 'Completes a provider sign-in of an account with two-factor on',
      description: 'Takes the mfaToken of the callback\'s 401 mfa-required answer (valid 5 minutes) with a current TOTP '
        + 'code (mfaCode) or a recovery code (recoveryCode, used up). Answers like a login: a token pair or the '
        + 'tenant-selection result (a recovery code: a token pair). Wrong code: 401 mfa-invalid; recovery codes lock as at /auth/recovery.',
      auth: 'public',
      schemas: { body: mfaChallengeBody, response: { 200: loginResponse } },
      async handler(ctx) {
        ctx.body = await completeMfaChallenge(deps, ctx.guard.body, ctx.ip);
      },
    }),
    defineRoute<NoParams, NoParams, RecoveryRequest>({
      namespace: 'iam', method: 'POST', path: '/auth/recovery', operationId: 'iam.auth.recovery',
      summary: 'Emergency login with the password and a recovery code',
      description: 'The code is used up. 5 wrong codes within 15 minutes lock recovery for an hour (429 with Retry-After); '
        + '15 wrong codes lock the account (403 account-locked).',
      auth: 'public',
      schemas: { body: recoveryBody, response: { 200: tokenPair } },
      async handler(ctx) {
        ctx.body = await recover(deps, ctx.guard.body, ctx.ip);
      },
    }),
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/auth/recovery-codes', operationId: 'iam.auth.recoveryCodes.count',
      summary: 'How many unused recovery codes the caller has',
      auth: 'bearer',
      schemas: { response: { 200: remainingResponse } },
      async handler(ctx) {
        ctx.body = { remaining: await remainingRecoveryCodes(deps, authOf(ctx)) };
      },
    }),
    defineRoute({
      namespace: 'iam', method: 'POST', path: '/auth/recovery-codes/regenerate', operationId: 'iam.auth.recoveryCodes.regenerate',
      summary: '10 new recovery codes; the old ones stop working',
      auth: 'bearer',
      schemas: { response: { 200: regeneratedResponse } },
      async handler(ctx) {
        ctx.body = { codes: await regenerateRecoveryCodes(deps, authOf(ctx), ctx.ip) };
      },
    }),
  ];
}
