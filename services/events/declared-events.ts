/**
 * What the event bus reads of the module catalogue: each module's declared event types (the `events`
 * member of its manifest, services/modules/manifest.ts). Modules sit above the bus in the order of
 * services (docs/architecture.md: a module's manifest is checked with the bus's schema rules, and
 * installing it registers its schemas), so the bus names only this much of a module, and the
 * catalogue (services/modules/catalogue.ts) is passed in where it is built.
 */
export interface ModuleEvents {
  slug: string;
  events: {
    /** The types the module may publish. */
    publishes: readonly string[];
    /** The types its consumer groups may receive. */
    subscribes: readonly string[];
  };
}

export interface DeclaredEvents {
  get(slug: string): ModuleEvents | undefined;
  /** Every known module. */
  list(): readonly ModuleEvents[];
}
