import {
  configureModule, installModule, listModules, uninstallModule, type ModuleRegistryDeps, type ModuleSettings,
} from '../../../services/modules/module-registry';
import { callerOf } from '../caller';
import { defineRoute, feeds, type AnyRoute } from '../../http/route-registry';
import { moduleList, moduleView, patchModule, slugParams, toModuleView, type SlugParams } from './modules.schemas';

type NoParams = Record<string, never>;

const NOT_FOUND = 'A slug the platform does not know, or (except for install) a module the tenant has not installed, is 404 module-not-found.';

/** The tenant's modules (docs/decisions/modules.md): list, install, configure (status, config) and uninstall (soft delete). */
export function moduleRoutes(deps: ModuleRegistryDeps): AnyRoute[] {
  return [
    defineRoute({
      namespace: 'iam', method: 'GET', path: '/modules', operationId: 'iam.modules.list',
      summary: 'Every module the platform knows, with whether the tenant installed it and its status',
      auth: 'bearer', permission: 'modules.list',
      // The catalogue's first module feeds its installation; an installed module feeds its configuration and removal.
      schemas: { response: { 200: moduleList }, links: { 200: feeds(['iam.modules.install'], { parameter: 'slug', from: '$response.body#/data/0/slug' }) } },
      async handler(ctx) {
        ctx.body = { data: (await listModules(deps, callerOf(ctx))).map(toModuleView) };
      },
    }),
    defineRoute<SlugParams>({
      namespace: 'iam', method: 'POST', path: '/modules/:slug/install', operationId: 'iam.modules.install',
      summary: 'Installs (or reinstalls) a module for the tenant and registers its permissions',
      description: '201 when an installation begins (a reinstall restores the module\'s archived permissions and keeps its '
        + 'configuration); 200 when it was installed already (its permissions are registered again, descriptions updated). '
        + `Permission keys that do not start with the slug, or that a system key reserves, are 400. ${NOT_FOUND}`,
      auth: 'bearer', permission: 'modules.install',
      schemas: {
        params: slugParams, response: { 200: moduleView, 201: moduleView },
        links: Object.fromEntries([200, 201].map((status) => [status, feeds(['iam.modules.configure', 'iam.modules.uninstall'], { parameter: 'slug', from: '$response.body#/slug' })])),
      },
      async handler(ctx) {
        const result = await installModule(deps, callerOf(ctx), ctx.guard.params.slug);
        ctx.body = toModuleView(result);
        ctx.status = result.created ? 201 : 200;
      },
    }),
    defineRoute<SlugParams, NoParams, ModuleSettings>({
      namespace: 'iam', method: 'PATCH', path: '/modules/:slug', operationId: 'iam.modules.configure',
      summary: 'Activates or deactivates an installed module and replaces its configuration',
      description: `An inactive module's routes answer 404 module-not-found; its permissions stay active. ${NOT_FOUND}`,
      auth: 'bearer', permission: 'modules.configure',
      schemas: { params: slugParams, body: patchModule, response: { 200: moduleView } },
      async handler(ctx) {
        ctx.body = toModuleView(await configureModule(deps, callerOf(ctx), ctx.guard.params.slug, ctx.guard.body));
      },
    }),
    defineRoute<SlugParams>({
      namespace: 'iam', method: 'DELETE', path: '/modules/:slug', operationId: 'iam.modules.uninstall',
      summary: 'Uninstalls a module (soft delete): its data is kept, its permissions are archived until a reinstall',
      description: NOT_FOUND,
      auth: 'bearer', permission: 'modules.uninstall',
      schemas: { params: slugParams, response: { 204: null } },
      async handler(ctx) {
        await uninstallModule(deps, callerOf(ctx), ctx.guard.params.slug);
        ctx.status = 204;
      },
    }),
  ];
}
