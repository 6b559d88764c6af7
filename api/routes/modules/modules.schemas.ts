import Joi from 'joi';
import type { TenantModule } from '../../../services/modules/module-registry';
import { isInstalled, type ModuleSettings } from '../../../services/modules/module-registry';

/**
 * Schemas of the tenant module routes (docs/decisions/modules.md, Installation, routes and events). A module is
 * shown as its manifest says it (slug, name, version, description, permissions, events) with the
 * tenant's installation: `installed`, `status` (null when not installed), the version installed,
 * the configuration and when it was installed.
 */

export interface SlugParams { slug: string }

/** Any text: a slug the catalogue does not know is 404 module-not-found, however it is spelled. */
export const slugParams = Joi.object<SlugParams>({ slug: Joi.string().max(100).required() });

export const patchModule = Joi.object<ModuleSettings>({
  status: Joi.string().valid('active', 'inactive'),
  // Replaces the module's configuration; whatever JSON object the module reads.
  config: Joi.object().unknown(true),
}).min(1);

const timestamp = Joi.string().isoDate();

export const moduleView = Joi.object({
  slug: Joi.string().required(),
  name: Joi.string().required(),
  version: Joi.string().required(),
  description: Joi.string().allow('').required(),
  installed: Joi.boolean().required(),
  status: Joi.string().valid('active', 'inactive').allow(null).required(),
  installedVersion: Joi.string().allow(null).required(),
  config: Joi.object().unknown(true).allow(null).required(),
  installedAt: timestamp.allow(null).required(),
  updatedAt: timestamp.allow(null).required(),
  permissions: Joi.array().items(Joi.object({ key: Joi.string().required(), description: Joi.string().allow('').required() })).required(),
  models: Joi.array().items(Joi.string()).required(),
  events: Joi.object({
    publishes: Joi.array().items(Joi.string()).required(),
    subscribes: Joi.array().items(Joi.string()).required(),
  }).required(),
});

export const moduleList = Joi.object({ data: Joi.array().items(moduleView).required() });

export function toModuleView({ manifest, installation }: TenantModule) {
  const current = isInstalled(installation) ? installation : null;
  return {
    slug: manifest.slug,
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    installed: current !== null,
    status: current?.status ?? null,
    installedVersion: current?.version ?? null,
    config: current?.config ?? null,
    installedAt: current?.installedAt ?? null,
    updatedAt: current?.updatedAt ?? null,
    permissions: manifest.permissions,
    models: Object.keys(manifest.models),
    events: manifest.events,
  };
}
