import { createPlatformClient, type PlatformClient } from '../../sdk/rest/client';
import { StepFailed, Unavailable } from './failures';
import { REQUEST_TIMEOUT_MS } from './timeouts';

// The REST client: Node's fetch, nothing of the gateway imported, so the tour sees only what a client
// sees; some steps call through the typed client of sdk/rest/ on the same fetch, as an integrator would.

export interface Answer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** The JSON body, or the text when the answer is not JSON. */
  body: T;
  bytes: Buffer;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
}

export class Http {
  constructor(private readonly base: string) {}

  /**
   * A request to a path of the base URL (`/v1/…`, `/health`) or to an absolute URL (a presigned
   * one). Redirects are not followed, so a 302 is seen as such.
   */
  async send<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | FormData | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form) {
      body = options.form;
    }
    const url = path.startsWith('http') ? path : `${this.base}${path}`;
    const response = await this.fetch(new Request(url, { method, headers, body }), `${method} ${path}`);
    const bytes = Buffer.from(await response.arrayBuffer());
    const isJson = /json/.test(response.headers.get('content-type') ?? '') && bytes.length > 0;
    let parsed: unknown = bytes.toString('utf8');
    if (isJson) {
      try {
        parsed = JSON.parse(parsed as string);
      } catch {
        throw new StepFailed(`${method} ${path} answered ${response.status} with a body that is not JSON: ${String(parsed).slice(0, 200)}`);
      }
    }
    return { status: response.status, headers: response.headers, body: parsed as T, bytes };
  }

  /**
   * Node's fetch with the tour's timeout, redirects not followed; no answer at all is Unavailable,
   * named `label`. Every request of the tour goes through it, the typed client's too.
   */
  async fetch(request: Request, label = `${request.method} ${new URL(request.url).pathname}`): Promise<Response> {
    try {
      return await fetch(request, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw new Unavailable(`${label} failed: ${describeError(error)}`);
    }
  }

  /** The typed REST client (sdk/rest/client.ts) on this base URL and fetch, calling with `token`. */
  client(token: string): PlatformClient {
    return createPlatformClient({ baseUrl: this.base, token: () => token, fetch: (request) => this.fetch(request) });
  }

  get<T = Record<string, unknown>>(path: string, token?: string, headers?: Record<string, string>): Promise<Answer<T>> {
    return this.send<T>('GET', path, { token, headers });
  }

  post<T = Record<string, unknown>>(path: string, json: unknown, token?: string, headers?: Record<string, string>): Promise<Answer<T>> {
    return this.send<T>('POST', path, { json, token, headers });
  }
}

/**
 * A typed client's answer as the steps check answers (expect.ts): its status, headers and body, the
 * body's bytes written again as JSON (the gateway's own compact form) for failure messages.
 */
export function answerOf<T>(result: { data?: T; error?: unknown; response: Response }): Answer<T> {
  const body = (result.data ?? result.error) as T;
  return { status: result.response.status, headers: result.response.headers, body, bytes: Buffer.from(body === undefined ? '' : JSON.stringify(body)) };
}

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${error.message} (${cause.code ?? cause.message ?? 'no cause'})` : error.message;
}
