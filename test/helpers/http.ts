import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RunningServer {
  baseUrl: string;
  close(): Promise<void>;
}

/** Serves a request listener (a Koa app's callback) on an ephemeral port of 127.0.0.1. */
export async function serve(listener: RequestListener, options: ServerOptions = {}): Promise<RunningServer> {
  const server = createServer(options, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      // fetch keeps connections alive; they would hold close() open.
      server.closeAllConnections();
    }),
  };
}

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * A loopback client address of its own, for a rate-limit bucket no other test (or test file running
 * beside this one) shares: 127.x.y.z from three random bytes. Never 127.0.0.x (127.0.0.1 is the tests'
 * own address and the proxy some gateways trust), nor an address ending in .0 or .255.
 */
export function someLoopback(): string {
  let octets: Buffer;
  do {
    octets = randomBytes(3);
  } while ((octets[0] === 0 && octets[1] === 0) || octets[2] === 0 || octets[2] === 255);
  return `127.${octets.join('.')}`;
}

/** fetch, with the body read as JSON (or as text when it is not JSON). */
export async function call<T = Record<string, unknown>>(url: string, init?: RequestInit): Promise<JsonResponse<T>> {
  const response = await fetch(url, init);
  const text = await response.text();
  const isJson = /json/.test(response.headers.get('content-type') ?? '');
  return { status: response.status, headers: response.headers, body: (isJson && text ? JSON.parse(text) : text) as T };
}

/** Polls until `probe` returns true or the time runs out (then throws with `what`). */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
