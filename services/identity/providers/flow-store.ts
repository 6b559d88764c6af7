import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { problems } from '../../../common/problems';

/**
 * A started provider sign-in or link, kept server-side in Redis until its callback: the PKCE
 * verifier and the nonce never leave the gateway, and the state the browser carries is only the
 * key. The key is stored as the SHA-256 of the state, and the entry is taken with GETDEL, so a state
 * works once (a replayed callback finds nothing) and for at most the TTL.
 */

const flowSchema = z.discriminatedUnion('purpose', [
  z.object({ purpose: z.literal('login'), providerId: z.string(), codeVerifier: z.string(), nonce: z.string() }),
  z.object({
    purpose: z.literal('link'), providerId: z.string(), codeVerifier: z.string(), nonce: z.string(),
    /** The account that asked for the link, and the tenant it asked from. */
    userId: z.string(), tenantId: z.string(),
  }),
]);
export type ProviderFlow = z.infer<typeof flowSchema>;
export type LinkFlow = Extract<ProviderFlow, { purpose: 'link' }>;

/** What the caller decides about a flow; the secrets are made here. */
export type FlowIntent = Omit<Extract<ProviderFlow, { purpose: 'login' }>, 'codeVerifier' | 'nonce'> | Omit<LinkFlow, 'codeVerifier' | 'nonce'>;

export interface StartedFlow {
  state: string;
  nonce: string;
  /** RFC 7636 S256: BASE64URL(SHA-256(code_verifier)). */
  codeChallenge: string;
}

const random = (): string => randomBytes(32).toString('base64url');
const keyOf = (state: string): string => `auth:oidc:flow:${createHash('sha256').update(state).digest('base64url')}`;

export class ProviderFlowStore {
  constructor(private readonly redis: Redis, private readonly ttlSeconds: number) {}

  async start(intent: FlowIntent): Promise<StartedFlow> {
    const state = random();
    const nonce = random();
    // 32 random bytes in base64url: 43 characters of the unreserved set RFC 7636 4.1 asks for.
    const codeVerifier = random();
    const flow: ProviderFlow = { ...intent, codeVerifier, nonce };
    await this.reach(() => this.redis.set(keyOf(state), JSON.stringify(flow), 'EX', this.ttlSeconds));
    return { state, nonce, codeChallenge: createHash('sha256').update(codeVerifier).digest('base64url') };
  }

  /** The flow of a state, removed in the same step; null when unknown, used or expired. */
  async consume(state: string): Promise<ProviderFlow | null> {
    const stored = await this.reach(() => this.redis.getdel(keyOf(state)));
    return stored === null ? null : flowSchema.parse(JSON.parse(stored));
  }

  private async reach<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch {
      throw problems.unavailable('Sign-in by provider is unavailable right now; try again shortly');
    }
  }
}
