import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths as AuditPaths } from './types/audit';
import type { paths as BillingPaths } from './types/billing';
import type { paths as DataPaths } from './types/data';
import type { paths as EventsPaths } from './types/events';
import type { paths as FilesPaths } from './types/files';
import type { paths as GatewayPaths } from './types/gateway';
import type { paths as IamPaths } from './types/iam';
import type { paths as MoneyPaths } from './types/money';
import type { paths as NotifyPaths } from './types/notify';

/**
 * The typed REST client: one openapi-fetch client per OpenAPI document of the gateway, typed by the
 * types `npm run sdk:generate` writes from those documents (sdk/rest/types/), so a path, its
 * parameters, its body and its answers are checked by the compiler. Every error answer is the RFC 9457
 * problem of the documents (`error`); the client never throws for a status.
 *
 * The bearer token is asked for on every call, as the EventService SDK (sdk/events.ts) asks for it, so
 * a caller can hand out fresh ones as they expire; a call that sends its own `Authorization` header
 * (another account's token, for instance) keeps it.
 *
 *   const api = createPlatformClient({ baseUrl: 'http://127.0.0.1:3000', token: () => session.accessToken });
 *   const { data, error } = await api.money.GET('/wallets/{walletId}', { params: { path: { walletId } } });
 */
export interface PlatformClientOptions {
  /** The gateway's origin (API_BASE_URL, http://127.0.0.1:3000 locally); the documents' paths are under its /v1. */
  baseUrl: string;
  /** The bearer token of the calls, or undefined for a call without one (register, login). */
  token?: () => string | undefined | Promise<string | undefined>;
  /** Another fetch (a test's, a proxy's); globalThis.fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
}

export interface PlatformClient {
  iam: Client<IamPaths>;
  data: Client<DataPaths>;
  money: Client<MoneyPaths>;
  files: Client<FilesPaths>;
  notify: Client<NotifyPaths>;
  audit: Client<AuditPaths>;
  events: Client<EventsPaths>;
  billing: Client<BillingPaths>;
  gateway: Client<GatewayPaths>;
}

/** `Authorization: Bearer <token>` for a call of its own: `{ headers: bearer(token) }`. */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const authorize: Middleware = {
    async onRequest({ request }) {
      if (request.headers.has('authorization') || !options.token) return request;
      const token = await options.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
  const clientOf = <Paths extends object>(): Client<Paths> => {
    const client = createClient<Paths>({ baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/v1`, ...(options.fetch ? { fetch: options.fetch } : {}) });
    client.use(authorize);
    return client;
  };
  return {
    iam: clientOf<IamPaths>(),
    data: clientOf<DataPaths>(),
    money: clientOf<MoneyPaths>(),
    files: clientOf<FilesPaths>(),
    notify: clientOf<NotifyPaths>(),
    audit: clientOf<AuditPaths>(),
    events: clientOf<EventsPaths>(),
    billing: clientOf<BillingPaths>(),
    gateway: clientOf<GatewayPaths>(),
  };
}
