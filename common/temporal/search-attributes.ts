import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair, type TypedSearchAttributes } from '@temporalio/common';

/** A key of any type (@temporalio/common 1.24 does not export its SearchAttributeKey type from the package root). */
type AnyKey = SearchAttributePair['key'];

/**
 * The custom search attributes every platform workflow carries, so an operator can filter one
 * tenant's workflows in the Temporal UI (`TenantId = "<id>" AND BusinessKind = "money.transfer"`).
 * infra/temporal/search-attributes.txt lists the same names and types for the bring-up scripts,
 * which register them in the namespace; test/unit/infra/search-attributes.test.ts keeps the two in
 * step. This module is bundled into the workflow sandbox too (workflows/interceptors.ts sets them on
 * child workflows), so it imports nothing but @temporalio/common.
 */

/** The tenant the workflow works for; absent on the fleet-wide sweeps of the Schedules. */
export const TenantId = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);

/** What the workflow does, as `<domain>.<name>` (see businessKinds). */
export const BusinessKind = defineSearchAttributeKey('BusinessKind', SearchAttributeType.KEYWORD);

/**
 * The wallets a money workflow acts on. A list, because a transfer acts on two wallets and an
 * operator looking into either one must find it (`WalletId = "<id>"` matches any element); a hold
 * names its one wallet.
 */
export const WalletId = defineSearchAttributeKey('WalletId', SearchAttributeType.KEYWORD_LIST);

/** Every custom key, in the order of infra/temporal/search-attributes.txt. */
export const platformSearchAttributeKeys: readonly AnyKey[] = [TenantId, BusinessKind, WalletId];

/**
 * The BusinessKind of each workflow type that workflows/index.ts exports: `<domain>.<name>`, where
 * the workflow lives in workflows/<domain>/<name>.workflow.ts; a second workflow of one file adds its
 * own suffix (fileRescanCheck). The fleet-wide ones read as their Schedule ids do
 * (workers/schedules.ts). The unit test derives every entry from the file layout, so a new workflow
 * without its kind fails there rather than going unfiltered in the UI.
 */
export const businessKinds: Readonly<Record<string, string>> = {
  auditColdExport: 'audit.cold-export',
  auditRetention: 'audit.retention',
  subscriptionLifecycle: 'billing.subscription',
  tenantTermination: 'billing.termination',
  usageSnapshot: 'billing.usage-snapshot',
  webhookRedelivery: 'billing.webhook-redelivery',
  deadLetterReplay: 'events.dead-letter-replay',
  webhookDelivery: 'events.webhook-delivery',
  filesOrphanSweep: 'files.orphan-sweep',
  fileProcess: 'files.process',
  fileRescan: 'files.rescan',
  fileRescanCheck: 'files.rescan-check',
  fileScan: 'files.scan',
  filesStagingSweep: 'files.staging-sweep',
  fileTrash: 'files.trash',
  expireStaleRecords: 'maintenance.expire-stale-records',
  moneyHold: 'money.hold',
  moneyHoldSweep: 'money.hold-sweep',
  moneyTransfer: 'money.transfer',
  sendEmail: 'notify.send-email',
};

/**
 * The tenant a workflow's input names: every tenant-scoped workflow of the platform takes one input
 * object with its `tenantId`, the same value its activities work under. Read from the input so that a
 * start outside a request's context (a worker's consumer, an activity, a registration that has no
 * tenant in its context yet) still labels the workflow.
 */
export function tenantOfInput(args: readonly unknown[] | undefined): string | undefined {
  const input = args?.[0];
  if (typeof input !== 'object' || input === null) return undefined;
  const tenantId = (input as { tenantId?: unknown }).tenantId;
  return typeof tenantId === 'string' && tenantId !== '' ? tenantId : undefined;
}

/**
 * The search attributes of a workflow start: what the starter gave (money workflows give their
 * WalletId; an explicit TenantId or BusinessKind wins), plus the workflow type's BusinessKind and the
 * tenant when known. Undefined when there is nothing to set, so a start that carries none (a test's
 * probe workflow) is left exactly as it was.
 */
export function withPlatformSearchAttributes(
  given: SearchAttributePair[] | TypedSearchAttributes | undefined,
  workflowType: string,
  tenantId: string | undefined,
): SearchAttributePair[] | undefined {
  const pairs: SearchAttributePair[] = given === undefined ? [] : Array.isArray(given) ? [...given] : given.getAll();
  const has = (key: AnyKey) => pairs.some((pair) => pair.key.name === key.name);
  const kind = Object.hasOwn(businessKinds, workflowType) ? businessKinds[workflowType] : undefined;
  if (kind !== undefined && !has(BusinessKind)) pairs.push({ key: BusinessKind, value: kind });
  if (tenantId !== undefined && !has(TenantId)) pairs.push({ key: TenantId, value: tenantId });
  return pairs.length > 0 ? pairs : undefined;
}

/** TenantId alone, for a start whose input does not name its tenant and whose context may not (sendEmail). */
export function tenantSearchAttributes(tenantId: string | undefined): SearchAttributePair[] | undefined {
  return tenantId === undefined ? undefined : [{ key: TenantId, value: tenantId }];
}
