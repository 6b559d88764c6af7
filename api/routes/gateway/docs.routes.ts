import { createReadStream } from 'node:fs';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import { problems } from '../../../common/problems';
import type { AppState } from '../../context';
import { NAMESPACES, type Namespace } from '../../http/route-registry';
import type { OpenApiDocument } from '../../openapi/document';

/**
 * The documentation routes of docs/reference/conventions.md#resources: `/api/v1/<namespace>/openapi.json`, Swagger UI at
 * `/api-docs/<namespace>` and Redoc at `/api-docs/<namespace>/redoc`. Both viewers are served
 * from the installed packages (swagger-ui-dist, redoc's standalone bundle): no CDN, so the docs
 * work offline and no third party sees who reads them.
 */
const swaggerDir = dirname(require.resolve('swagger-ui-dist/package.json'));
// redoc's main file sits in its bundles folder next to the standalone bundle; resolving it does not load it.
const redocDir = dirname(require.resolve('redoc'));

const ASSETS: Record<string, { path: string; type: string }> = {
  'swagger-ui.css': { path: join(swaggerDir, 'swagger-ui.css'), type: 'text/css' },
  'swagger-ui-bundle.js': { path: join(swaggerDir, 'swagger-ui-bundle.js'), type: 'application/javascript' },
  'favicon-32x32.png': { path: join(swaggerDir, 'favicon-32x32.png'), type: 'image/png' },
  'redoc.standalone.js': { path: join(redocDir, 'redoc.standalone.js'), type: 'application/javascript' },
};

function namespaceOf(value: string): Namespace {
  if (!(NAMESPACES as readonly string[]).includes(value)) throw problems.notFound(`API namespace ${value}`);
  return value as Namespace;
}

const specUrl = (namespace: Namespace) => `/api/v1/${namespace}/openapi.json`;

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" type="image/png" href="/api-docs/assets/favicon-32x32.png">
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

function swaggerPage(namespace: Namespace): string {
  return page(
    `Platform ${namespace} API`,
    '<link rel="stylesheet" href="/api-docs/assets/swagger-ui.css">',
    `<div id="swagger-ui"></div>
<script src="/api-docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(specUrl(namespace))}, dom_id: '#swagger-ui' });</script>`,
  );
}

function redocPage(namespace: Namespace): string {
  return page(
    `Platform ${namespace} API`,
    '<style>body { margin: 0; padding: 0; }</style>',
    `<redoc spec-url=${JSON.stringify(specUrl(namespace))}></redoc>
<script src="/api-docs/assets/redoc.standalone.js"></script>`,
  );
}

export function mountDocs(router: Router<AppState>, documents: ReadonlyMap<Namespace, OpenApiDocument>): void {
  router.get('/api/v1/:namespace/openapi.json', (ctx) => {
    ctx.body = documents.get(namespaceOf(ctx.params.namespace));
  });
  router.get('/api-docs/assets/:file', (ctx) => {
    if (!Object.hasOwn(ASSETS, ctx.params.file)) throw problems.notFound(`asset ${ctx.params.file}`);
    const asset = ASSETS[ctx.params.file];
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(asset.path);
  });
  router.get('/api-docs/:namespace', (ctx) => {
    ctx.type = 'html';
    ctx.body = swaggerPage(namespaceOf(ctx.params.namespace));
  });
  router.get('/api-docs/:namespace/redoc', (ctx) => {
    ctx.type = 'html';
    ctx.body = redocPage(namespaceOf(ctx.params.namespace));
  });
}
