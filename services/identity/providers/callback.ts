import type { ProviderLink } from '../../../db/queries/identity/provider-links.queries';
import type { TokenPair } from '../deps';
import type { TenantSelection } from '../login';
import type { CallbackQuery } from './external-providers';
import { assertLinkCaller, completeLink, type LinkServices } from './links';
import { signInWithProvider } from './sign-in';

/**
 * GET /auth/callback/:providerId: redeems the state (once), then, for a link flow, checks the
 * caller before the code is spent; the verified identity then signs in (token pair or tenant
 * selection) or becomes a link of the account that started the flow.
 */
export async function completeCallback(
  services: LinkServices,
  providerId: string,
  query: CallbackQuery,
  authorization: string,
): Promise<TokenPair | TenantSelection | ProviderLink> {
  const { flow, code } = await services.providers.take(providerId, query);
  if (flow.purpose === 'link') await assertLinkCaller(services.deps, flow, authorization);
  const identity = await services.providers.identify(flow, code);
  return flow.purpose === 'link' ? completeLink(services.deps, flow, identity) : signInWithProvider(services.deps, identity);
}
