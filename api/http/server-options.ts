import type { ServerOptions } from 'node:http';

/**
 * Node's HTTP server refuses a request line and headers over 16 KiB with a bare 431 and no problem
 * body. The documents allow longer query strings (an OAuth callback's `code` alone may be 4 096
 * characters, tripled by percent-encoding), so the gateway takes 32 KiB: whatever a document allows
 * reaches the router and its validation, which answers in the problem format.
 */
export const HTTP_SERVER_OPTIONS: ServerOptions = { maxHeaderSize: 32 * 1024 };
