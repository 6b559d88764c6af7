import { StepFailed, Unavailable } from './failures';
import { REQUEST_TIMEOUT_MS } from './timeouts';

// The REST client: Node's fetch, nothing of the gateway imported, so the tour sees only what a client sees.

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
    let response: Response;
    try {
      response = await fetch(url, {
        method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new Unavailable(`${method} ${path} failed: ${describeError(error)}`);
    }
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

  get<T = Record<string, unknown>>(path: string, token?: string, headers?: Record<string, string>): Promise<Answer<T>> {
    return this.send<T>('GET', path, { token, headers });
  }

  post<T = Record<string, unknown>>(path: string, json: unknown, token?: string, headers?: Record<string, string>): Promise<Answer<T>> {
    return this.send<T>('POST', path, { json, token, headers });
  }
}

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${error.message} (${cause.code ?? cause.message ?? 'no cause'})` : error.message;
}
