/**
 * The contract between the data layer and the hook code a module ships (docs/reference/data.md#rule-23:
 * hooks; `modules/<slug>/hooks.ts`). A module's code imports nothing of the platform but this file
 * and the problem registry (common/problems.ts), which it throws from to refuse a write; the rule is
 * `.dependency-cruiser.cjs` modules-see-only-common.
 */

/** A record's fields as JSON: numeric and bigint as exact strings, dates as ISO strings. */
export type DataValues = Readonly<Record<string, unknown>>;

export interface BeforeHookInput {
  tenantId: string;
  /** The user the request acts as; null when the platform writes on its own account (an event subscriber). */
  userId: string | null;
  module: string;
  model: string;
  /** create and update: the fields being written, already checked against the model; delete: {}. */
  data: DataValues;
  /** update and delete: the record as it is now (read under the write's row lock); create: null. */
  record: DataValues | null;
}

/**
 * A before hook runs inside the record's transaction, before the write. To refuse the write it
 * throws a 4xx problem of common/problems.ts (`problems.validation([...])`), and nothing is written;
 * on create and update it may return the values it changes, which are merged over `data` and checked
 * against the model again; returning nothing leaves `data` as it is. A delete hook may only refuse.
 */
export type BeforeHook = (input: BeforeHookInput) => DataValues | void | Promise<DataValues | void>;
