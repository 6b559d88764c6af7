import Koa from 'koa';
import pino from 'pino';
import { Writable } from 'node:stream';
import { requestContext } from '../../../api/middleware/request-context';
import { call, serve, type RunningServer } from '../../helpers/http';

/**
 * The gateway's one log line per request: its ids, and the tenant once authentication found it, so
 * an operator can tell which tenant a 429 or a 5xx was for.
 */
const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
    done();
  },
});

let server: RunningServer;

beforeAll(async () => {
  const app = new Koa();
  app.use(requestContext(pino({ level: 'info' }, sink)));
  app.use(async (ctx) => {
    // What the authentication middleware leaves for a bearer request.
    if (ctx.path === '/tenant') ctx.state.auth = { tenantId: 'tenant-1', userId: 'user-1' };
    ctx.status = ctx.path === '/tenant' ? 429 : 200;
  });
  const handle = app.callback();
  // Koa's handler answers its own errors, so its promise never rejects.
  server = await serve((request, response) => void handle(request, response));
});

afterAll(() => server.close());

const completed = () => lines.filter((line) => line.msg === 'request completed');

it('names the tenant of an authenticated request, and none of an anonymous one', async () => {
  const tenantAnswer = await call(`${server.baseUrl}/tenant`);
  const anonymousAnswer = await call(`${server.baseUrl}/anonymous`);

  expect(completed()).toEqual([
    expect.objectContaining({ tenantId: 'tenant-1', requestId: tenantAnswer.headers.get('x-request-id'), res: { status: 429 } }),
    expect.objectContaining({ requestId: anonymousAnswer.headers.get('x-request-id'), res: { status: 200 } }),
  ]);
  expect(completed()[1]).not.toHaveProperty('tenantId');
});
