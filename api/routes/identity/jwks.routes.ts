import type Router from '@koa/router';
import type { TokenService } from '../../../services/identity/tokens';
import type { AppState } from '../../context';

/**
 * GET /.well-known/jwks.json, at the root of the host like the probes (outside /v1): the public
 * keys that verify access tokens, the signing key and those retired keys that still verify.
 */
export function mountJwks(router: Router<AppState>, tokens: TokenService): void {
  router.get('/.well-known/jwks.json', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = tokens.jwks;
  });
}
