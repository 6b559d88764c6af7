import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authOf } from '../../api/context';
import { createApp } from '../../api/app';
import { startGatewayRuntime } from '../../api/gateway-runtime';
import { defineRoute, type AnyRoute } from '../../api/http/route-registry';
import { platformRoutes } from '../../api/routes';
import { recordList } from '../../api/routes/data/records.schemas';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { problems } from '../../common/problems';
import type { DataDeps } from '../../services/data/records';
import { benchListStatement } from './data-list';

/**
 * The gateway of bench/data.bench.ts: api/server.ts's app (every platform route, the same runtime
 * and middleware) plus one hand-written route, GET /v1/bench/data/contacts, the reference the query
 * language's own cost is measured against (issue 16). It answers the bench's list as a route written
 * for it would: the same authentication, installed-module check, permissions (the model's and the
 * embedded model's read), transaction under row-level security (the same one-round-trip
 * TenantReader), response-size check and envelope, and the SQL text our planner makes of the list,
 * built once at start: what it does not do per request is parse, check and plan the query string,
 * build the SQL and sign its page token.
 */
const TEMPLATE_TENANT = '00000000-0000-7000-8000-000000000000';

/** docs/reference/data.md#rule-20: a response body is at most 1 MB (services/data/records.ts checks it too). */
const RESPONSE_MAX_BYTES = 1_048_576;

function handWrittenList(deps: DataDeps): AnyRoute {
  const { statement, pageSize, settings } = benchListStatement(TEMPLATE_TENANT);
  return defineRoute({
    namespace: 'data', method: 'GET', path: '/bench/data/contacts', operationId: 'bench.data.contacts',
    summary: 'The bench list of contacts, hand-written', auth: 'bearer', module: 'crm',
    schemas: { response: { 200: recordList } },
    async handler(ctx) {
      const auth = authOf(ctx);
      for (const key of ['crm.contacts.read', 'crm.companies.read']) {
        if (!await deps.permissions.allows(auth, key)) throw problems.forbidden(`${key} is required`);
      }
      const values = statement.values.map((value) => (value === TEMPLATE_TENANT ? auth.tenantId : value));
      const rows = await deps.reads.rows(auth.tenantId, { ...statement, values }, settings);
      const data = rows.slice(0, pageSize).map(({ $keyset: _keys, ...fields }) => fields);
      const body = rows.length > pageSize
        ? { data, next_page_token: Buffer.from(JSON.stringify(rows[pageSize - 1].$keyset)).toString('base64url') }
        : { data };
      if (Buffer.byteLength(JSON.stringify(body)) > RESPONSE_MAX_BYTES) throw problems.responseTooLarge(RESPONSE_MAX_BYTES);
      ctx.body = body;
    },
  });
}

async function main(): Promise<void> {
  const cfg = config();
  const logger = createLogger('api', cfg.logLevel);
  const runtime = await startGatewayRuntime(cfg, logger);
  const app = createApp({
    config: cfg, logger, routes: [...platformRoutes(runtime), handWrittenList(runtime.data)], ...runtime.gateway, ...runtime.probes,
  });
  const handle = app.callback();
  const server = createServer((request, response) => void handle(request, response));
  server.listen(cfg.api.port, cfg.api.host, () => {
    // The line startChildServer waits for (bench/lib/load.ts), as api/server.ts logs it.
    logger.info({ port: (server.address() as AddressInfo).port }, 'gateway listening');
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    void runtime.close().finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`bench data gateway failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
