/**
 * The directions of the layout (README, Layout; docs/architecture.md): api → services → db → common;
 * activities → services; workflows → workflows and type-only imports of activities and messages;
 * nothing imports api/. `npm test` and CI run `depcruise` with this file; it must be clean.
 */
const code = '^(api|services|activities|workflows|workers|db|common|scripts)/';

/**
 * The service domains in the one order they may import each other, lowest first: a folder of services/ may import
 * those before it, never one after it, so no two domains form a cycle (docs/architecture.md, Folders and their
 * directions). Idempotency stores an answer with the outbox rows its operation hands it and knows no other domain.
 * The event bus is next, because every domain writes its events through its outbox (services/events/publish.ts)
 * and names its topics; what the bus needs of a higher domain it takes as a port (the module catalogue as
 * services/events/declared-events.ts, audit's writer as services/events/audit-trail.ts), and what runs above it
 * (the modules' subscribers, which write records) lives in data. Audit records travel as events, so the bus's own
 * audited features are handed audit's writer; access, billing and notify use audit; modules check their manifests
 * against access, billing and the bus; data runs on the modules' manifests; files, money and identity build on
 * those; jobs reads the jobs of every domain through the contract in common/jobs.ts; the gateway's own services
 * (probes, feature flags) come last, as the gateway may call any domain.
 * Type-only imports count too: a type names its domain as much as a value does, and a type shared by domains that
 * knows none of them belongs in common/ (common/context.ts's Caller, common/jobs.ts).
 */
const serviceOrder = ['idempotency', 'events', 'audit', 'access', 'billing', 'notify', 'modules', 'data', 'files', 'money', 'identity', 'maintenance', 'jobs', 'gateway'];

const servicesInOrder = serviceOrder.slice(0, -1).map((domain, index) => ({
  name: `services-in-order-${domain}`, severity: 'error',
  comment: `services/${domain}/ may import only the service folders declared before it in serviceOrder (.dependency-cruiser.cjs).`,
  from: { path: `^services/${domain}/` },
  to: { path: `^services/(${serviceOrder.slice(index + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'A cycle makes two modules one; split what both need into a third.', from: {}, to: { circular: true } },
    {
      name: 'no-orphans', severity: 'error', comment: 'A module nothing imports is dead code, unless it is an entry point.',
      from: { orphan: true, path: code, pathNot: ['^api/server\\.ts$', '^workers/[^/]+\\.ts$', '^scripts/[^/]+\\.ts$', '^workflows/interceptors\\.ts$', '\\.d\\.ts$'] },
      to: {},
    },
    {
      name: 'nothing-imports-api', severity: 'error',
      comment: 'api/ is the gateway only; what others need of it belongs in services/ or common/. The one exception is '
        + 'scripts/sdk-generate.ts, which builds the gateway\'s OpenAPI documents from its route list to generate the typed client\'s types.',
      from: { path: code, pathNot: ['^api/', '^scripts/sdk-generate\\.ts$'] }, to: { path: '^api/' },
    },
    {
      name: 'common-knows-no-domain', severity: 'error', comment: 'common/ is the kernel: it knows no domain and runs no SQL.',
      from: { path: '^common/' }, to: { path: ['^(api|services|activities|workflows|workers|db|scripts)/', '^node_modules/(slonik|pg|@slonik)/'] },
    },
    {
      name: 'db-imports-only-common', severity: 'error', comment: 'db/ is the pool, the migrations and the queries; it imports nothing above it but common/.',
      from: { path: '^db/' }, to: { path: '^(api|services|activities|workflows|workers|scripts)/' },
    },
    {
      name: 'gateway-reaches-postgres-through-services', severity: 'error',
      comment: 'The gateway reaches PostgreSQL only through services/: it runs no query and opens no tenant transaction, and it '
        + 'knows rows only as the services present them (a service re-exports a row type or a status list a route needs). From db/ '
        + 'it may name only the pool, the tenant reader and the announcement listener (docs/decisions/layout.md).',
      from: { path: '^api/' }, to: { path: '^db/', pathNot: '^db/(pool|tenant-reads|pg-channel-listener)\\.ts$' },
    },
    {
      name: 'gateway-opens-connections-in-one-place', severity: 'error',
      comment: 'Only the gateway\'s composition root opens its connections, as every process\'s entry point does: the pools and the '
        + 'tenant reader in api/runtime/connections.ts, the LISTEN connection in api/gateway-runtime.ts. Elsewhere in api/ they are types.',
      from: { path: '^api/', pathNot: '^api/(gateway-runtime|runtime/connections)\\.ts$' },
      to: { path: '^db/(pool|tenant-reads|pg-channel-listener)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'services-below-adapters', severity: 'error', comment: 'services/ is called by the gateway and the activities, never the other way round.',
      from: { path: '^services/' }, to: { path: '^(api|activities|workers|scripts)/' },
    },
    ...servicesInOrder,
    {
      name: 'services-folders-declared', severity: 'error',
      comment: 'Every folder of services/ has its place in serviceOrder, so the order rules cover it.',
      from: { path: '^services/', pathNot: `^services/(${serviceOrder.join('|')})/` }, to: {},
    },
    {
      name: 'services-use-workflow-messages-only', severity: 'error',
      comment: 'A service starts or signals workflows through their message definitions and the types of their functions, never their code.',
      from: { path: '^services/' }, to: { path: '^workflows/', pathNot: '\\.messages\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'activities-are-adapters', severity: 'error', comment: 'Activities translate failures and call services/; the work itself lives there.',
      from: { path: '^activities/' }, to: { path: '^(api|workers|scripts)/' },
    },
    {
      name: 'activities-run-no-queries', severity: 'error',
      comment: 'An activity calls a use-case of services/, which runs the queries; it may name their row types (type-only).',
      from: { path: '^activities/' },
      to: { path: '^db/queries/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'activities-use-workflow-messages-only', severity: 'error',
      comment: 'Activities share message and failure types with workflows, never workflow code.',
      from: { path: '^activities/' }, to: { path: '^workflows/', pathNot: '\\.messages\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-are-sandboxed', severity: 'error',
      comment: 'Workflow code runs in Temporal\'s deterministic sandbox: only workflows/ and type-only imports from outside it. '
        + 'The exceptions are the header codec of the request context and the search attributes, which the workflow interceptors '
        + 'share with the client (and activity) interceptors; they import nothing but @temporalio/common.',
      from: { path: '^workflows/' },
      to: { path: '^(api|services|activities|workers|db|common|scripts)/', pathNot: '^common/temporal/(propagated-context|search-attributes)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-know-no-tables', severity: 'error',
      comment: 'A workflow\'s messages are a contract its histories keep for as long as they are replayed; a table\'s row type changes with '
        + 'a migration. So workflows/ import nothing of db/, not even a type: the messages state their own types, and the activities '
        + 'and services that fill them from rows check at compile time that the two agree (docs/decisions/layout.md, Workflow contracts).',
      from: { path: '^workflows/' }, to: { path: '^db/' },
    },
    {
      name: 'modules-see-only-common', severity: 'error',
      comment: 'A module\'s hook code ships with its manifest and is run by the data layer: it knows the platform only through '
        + 'common/ (the hook contract common/data-hooks.ts and the problem registry), never a service, a query or the gateway.',
      from: { path: '^modules/' }, to: { path: '^(api|services|activities|workflows|workers|db|scripts)/' },
    },
    {
      name: 'sdk-sees-only-the-wire', severity: 'error',
      comment: 'The module SDK (sdk/) is what module code calls over the gRPC EventService: it knows the platform only through the '
        + 'proto loader and ids of common/ and the topic catalogue (which topic an event type goes to), never a service\'s code.',
      from: { path: '^sdk/' },
      to: { path: '^(api|services|activities|workflows|workers|db|scripts|modules)/', pathNot: '^services/events/topics\\.ts$' },
    },
    {
      name: 'only-the-hook-registry-loads-modules', severity: 'error',
      comment: 'Modules\' code is reached through services/data/hooks.ts, which maps the manifests\' handler names to it, '
        + 'and services/data/module-subscribers.ts, which checks their subscribers against the manifests.',
      from: { pathNot: '^(services/data/(hooks|module-subscribers)\\.ts|modules/)' }, to: { path: '^modules/' },
    },
    {
      name: 'middleware-below-routes', severity: 'error', comment: 'Inside the gateway, routes use middleware and runtime; never the reverse.',
      from: { path: '^api/(middleware|runtime|http|resilience|metrics|health|openapi)/' }, to: { path: '^api/(routes|app\\.ts|server\\.ts)' },
    },
    {
      name: 'runtime-below-middleware', severity: 'error', comment: 'Caches and listeners are used by middleware, not the other way round.',
      from: { path: '^api/(runtime|http|resilience|metrics|health)/' }, to: { path: '^api/middleware/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
