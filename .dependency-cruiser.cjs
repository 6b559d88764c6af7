/**
 * The directions of the layout (README, Layout; docs/architecture.md): api → services → db → common;
 * activities → services; workflows → workflows and type-only imports of activities and messages;
 * nothing imports api/. `npm test` and CI run `depcruise` with this file; it must be clean.
 */
const code = '^(api|services|activities|workflows|workers|db|common|scripts)/';

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
      name: 'services-below-adapters', severity: 'error', comment: 'services/ is called by the gateway and the activities, never the other way round.',
      from: { path: '^services/' }, to: { path: '^(api|activities|workers|scripts)/' },
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
        + 'and services/events/consumers/module-subscribers.ts, which checks their subscribers against the manifests.',
      from: { pathNot: '^(services/data/hooks\\.ts|services/events/consumers/module-subscribers\\.ts|modules/)' }, to: { path: '^modules/' },
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
