import { authOf, type AppMiddleware } from '../context';
import type { AnyRoute } from '../http/route-registry';
import { problems } from '../../common/problems';

/**
 * Put after authorization on routes of high-value actions (`stepUp`, docs/reference/identity.md#rule-46):
 * a stolen access token, or a session left open, acts only within STEP_UP_MAX_AGE_SECONDS of the sign-in
 * that proved a credential (the token's `auth_time`, which refreshes keep). A token without the claim
 * (signed before it existed) is never recent. An API key has no sign-in: the route says whether keys may
 * still call it.
 */
export function stepUp(step: NonNullable<AnyRoute['stepUp']>, maxAgeSeconds: number): AppMiddleware {
  return async (ctx, next) => {
    const auth = authOf(ctx);
    if (auth.apiKey) {
      if (step.apiKeys === 'refused') throw problems.forbidden('This action needs a person who signed in recently; an API key cannot take it');
    } else if (auth.authTime === undefined || Date.now() / 1000 - auth.authTime > maxAgeSeconds) {
      throw problems.reauthenticationRequired(maxAgeSeconds);
    }
    await next();
  };
}
