import type { BeforeHook, BeforeHookInput, DataValues } from '../../common/data-hooks';
import * as crmHooks from '../../modules/crm/hooks';
import { ManifestError, type ModuleCatalogue } from '../modules/catalogue';
import type { HookEvent } from '../modules/manifest';

/**
 * The before hooks of the data layer (docs/reference/data.md#rule-23), loaded once at start-up from
 * the manifests' `hooks` and the code each module ships in `modules/<slug>/hooks.ts`. The after
 * hooks are not called here: they are the `{module}.{model}.created|updated|deleted` events every
 * write puts in the outbox (record-changes.ts), which the module consumes.
 */

/** The exports of a module's hooks.ts, by handler name. */
export type ModuleHookCode = Readonly<Record<string, unknown>>;

/**
 * The hook code of every shipped module, by slug. Static imports, not paths built at run time: tsc
 * compiles `modules/` into dist/ with the rest, jest resolves the same import from source, and a
 * module's code can never be a file a manifest names.
 */
export const SHIPPED_HOOK_CODE: ReadonlyMap<string, ModuleHookCode> = new Map([['crm', crmHooks]]);

export type BeforeEvent = Extract<HookEvent, 'beforeCreate' | 'beforeUpdate' | 'beforeDelete'>;
const BEFORE_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['beforeCreate', 'beforeUpdate', 'beforeDelete']);
const isBefore = (on: HookEvent): on is BeforeEvent => BEFORE_EVENTS.has(on);

const keyOf = (module: string, model: string, event: BeforeEvent) => `${module}.${model}.${event}`;

export class DataHooks {
  constructor(private readonly byKey: ReadonlyMap<string, readonly BeforeHook[]>) {}

  /**
   * Runs the model's hooks of `event` in manifest order, each seeing the data the one before left,
   * and returns the data to write (the input's when no hook changed it). A hook refuses by throwing;
   * what a delete hook returns is ignored (a delete writes no fields).
   */
  async runBefore(event: BeforeEvent, input: BeforeHookInput): Promise<DataValues> {
    let data = input.data;
    for (const hook of this.byKey.get(keyOf(input.module, input.model, event)) ?? []) {
      const changed = await hook({ ...input, data });
      if (changed && event !== 'beforeDelete') data = { ...data, ...changed };
    }
    return data;
  }
}

/**
 * Maps every before hook of every manifest to its handler. A handler the module's code does not
 * export is refused like a broken manifest: the gateway does not start, and the message names the
 * module, the hook and the handler (every one of them at once).
 */
export function loadDataHooks(modules: ModuleCatalogue, code: ReadonlyMap<string, ModuleHookCode> = SHIPPED_HOOK_CODE): DataHooks {
  const missing: string[] = [];
  const byKey = new Map<string, BeforeHook[]>();
  for (const manifest of modules.list()) {
    const exported = code.get(manifest.slug) ?? {};
    manifest.hooks.forEach((hook, index) => {
      const event = hook.on;
      if (!isBefore(event)) return;
      // Own properties only: a CommonJS exports object inherits toString and the like.
      const handler = Object.hasOwn(exported, hook.handler) ? exported[hook.handler] : undefined;
      if (typeof handler !== 'function') {
        missing.push(`module ${manifest.slug}: hooks[${index}] (${hook.model} ${hook.on}) names ${hook.handler}, which modules/${manifest.slug}/hooks.ts does not export as a function`);
        return;
      }
      const key = keyOf(manifest.slug, hook.model, event);
      byKey.set(key, [...(byKey.get(key) ?? []), handler as BeforeHook]);
    });
  }
  if (missing.length > 0) throw new ManifestError(`module hooks cannot be loaded: ${missing.join('; ')}`);
  return new DataHooks(byKey);
}
