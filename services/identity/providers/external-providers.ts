import type { Config } from '../../../common/config';
import { problems } from '../../../common/problems';
import type { IdentityDeps } from '../deps';
import { ProviderFlowStore, type FlowIntent, type ProviderFlow } from './flow-store';
import { OidcClient, type ProviderClaims } from './oidc-client';

/** GET /auth/providers: what the login page shows (no secret, no endpoint). */
export interface ProviderSummary {
  id: string;
  name: string;
  type: 'oidc';
}

/** The provider callback's query (RFC 6749 4.1.2 and 4.1.2.1, RFC 9207 iss). */
export interface CallbackQuery {
  state: string;
  code?: string;
  error?: string;
  error_description?: string;
  iss?: string;
}

/** A provider identity proved by a completed callback. */
export interface ProviderIdentity extends ProviderClaims {
  providerId: string;
}

/**
 * The configured providers and the two halves of every flow: `begin` stores a new state (with its
 * PKCE verifier and nonce) and answers the provider's URL; `take` redeems a callback's state once,
 * and `identify` turns its code into a verified identity.
 */
export class ExternalProviders {
  private readonly clients: ReadonlyMap<string, OidcClient>;
  private readonly flows: ProviderFlowStore;

  constructor(settings: Config['identity']['providers'], redis: IdentityDeps['redis']) {
    this.clients = new Map(settings.list.map((provider) => [provider.id, new OidcClient(provider, settings)]));
    this.flows = new ProviderFlowStore(redis, settings.stateTtlSeconds);
  }

  list(): ProviderSummary[] {
    return [...this.clients.values()].map(({ settings }) => ({ id: settings.id, name: settings.name, type: 'oidc' }));
  }

  /** 404 for a provider that is not configured. */
  client(providerId: string): OidcClient {
    const client = this.clients.get(providerId);
    if (!client) throw problems.notFound('provider');
    return client;
  }

  async begin(intent: FlowIntent): Promise<{ url: string }> {
    const client = this.client(intent.providerId);
    const started = await this.flows.start(intent);
    return { url: await client.authorizationUrl(started) };
  }

  /**
   * The flow of a callback's state, used up by this call whatever follows: an unknown, used or
   * expired state, or one started for another provider, is 401; so is a provider that answered
   * with an error (the user declined, or the provider refused the request).
   */
  async take(providerId: string, query: CallbackQuery): Promise<{ flow: ProviderFlow; code: string }> {
    const client = this.client(providerId);
    const flow = await this.flows.consume(query.state);
    if (!flow || flow.providerId !== providerId) throw problems.unauthorized('The sign-in state is unknown, used or expired; start again');
    await client.checkResponseIssuer(query);
    if (query.error) throw problems.unauthorized(`The provider did not complete the sign-in (${query.error})`);
    if (!query.code) throw problems.unauthorized('The provider response carries no authorization code');
    return { flow, code: query.code };
  }

  async identify(flow: ProviderFlow, code: string): Promise<ProviderIdentity> {
    const claims = await this.client(flow.providerId).claimsFor(code, flow.codeVerifier, flow.nonce);
    return { ...claims, providerId: flow.providerId };
  }
}
