import { NAMESPACES } from '../../../api/http/route-registry';
import type { DatabasePool } from '../../../db/pool';
import type { TestGateway } from '../app';
import { acceptsId, ID_KINDS, operationsWithIds, type IdKind, type IdSlot, type OpenApiDocument, type Operation } from './operations';
import { minimalValue } from './schema';
import { seedTenant, type SeededTenant } from './seed';
import { changedTables, settledSnapshot, snapshotTenant } from './snapshot';

/**
 * The cross-tenant run (docs/cross-tenant.md): tenant B, whose owner holds every permission, calls
 * every operation of the documents that takes an id (operations.ts) with tenant A's real ids, one id
 * slot at a time, the other slots holding B's own ids; each call is repeated with an id that exists
 * nowhere (the control). A call passes when B's answer is the control's (so it tells nothing of A's
 * resource), is a 404 or a 403 (or, for a slot of free text, B's own 2xx), holds none of A's ids and
 * secrets, and, at the end, A's rows in PostgreSQL are as they were.
 */

export type Outcome =
  | '404' | '403'
  /** The same 4xx as the control, not 404 or 403: B's request fails for a reason that is not the id. */
  | 'refused-regardless'
  /**
   * 2xx, as for the control, with nothing of A's in it: the operation works on B's own data and looks
   * nothing of A's up (a slot of free text, such as an audit record's entityId; OPTIONS; OWN_SCOPE).
   */
  | 'own-scope'
  | 'violation';

export interface Call {
  operation: Operation;
  slot: IdSlot;
  kind: IdKind;
  method: string;
  url: string;
  status: number;
  problemType?: string;
  controlStatus: number;
  controlProblemType?: string;
  outcome: Outcome;
  /** Why the call is a violation, or what refused it regardless of the id. */
  note?: string;
}

export interface RunReport {
  operations: Operation[];
  calls: Call[];
  /** Tables of A whose rows changed during the run (the target is none). */
  changedTables: string[];
  /** The operations and A's and B's ids, for a reader of a failure. */
  tenants: { a: SeededTenant; b: SeededTenant };
}

export interface RunOptions {
  /** Every kind of A's ids in every slot, not only the kinds its name tells (the long variant). */
  everyKind?: boolean;
  /** Calls in flight at once. */
  concurrency?: number;
}

/** The namespace documents as the gateway serves them (/api/v1/{namespace}/openapi.json). */
export async function fetchDocuments(gateway: TestGateway): Promise<Map<string, OpenApiDocument>> {
  const documents = new Map<string, OpenApiDocument>();
  for (const namespace of NAMESPACES) {
    const response = await fetch(`${gateway.baseUrl}/api/v1/${namespace}/openapi.json`);
    if (response.status !== 200) throw new Error(`the ${namespace} document answered ${response.status}`);
    documents.set(namespace, await response.json() as OpenApiDocument);
  }
  return documents;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The same id with its last character changed within its alphabet: an id of the same shape that exists nowhere. */
export function controlIdOf(id: string): string {
  const alphabet = ULID.test(id) ? '0123456789ABCDEFGHJKMNPQRSTVWXYZ' : '0123456789abcdef';
  return `${id.slice(0, -1)}${alphabet[(alphabet.indexOf(id.at(-1)!) + 7) % alphabet.length]}`;
}

/**
 * Operations whose id names no resource to look up but a key within the caller's own data, so that B
 * rightly succeeds with A's id as with any other; each with its reason (docs/cross-tenant.md).
 */
export const OWN_SCOPE: Readonly<Record<string, string>> = {
  'audit.anonymize': 'replaces the user id in the caller\'s own tenant\'s audit records; it looks no user up, and A\'s records are another tenant\'s',
};

interface Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** The request of `operation` with `values` in its id slots. */
function requestOf(gateway: TestGateway, operation: Operation, token: string, values: ReadonlyMap<IdSlot, string>): Request {
  const valueOf = (slot: IdSlot): string | string[] | undefined => {
    const value = values.get(slot);
    return value === undefined || !slot.list ? value : [value];
  };
  let path = operation.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  for (const parameter of operation.parameters) {
    const slot = operation.slots.find((candidate) => candidate.in === 'path' && candidate.name === parameter.name);
    const value = slot && parameter.in === 'path' ? String(valueOf(slot)) : parameter.required ? String(minimalValue(parameter.schema, operation.components)) : undefined;
    if (value === undefined) continue;
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(value));
    else if (parameter.in === 'query') query.set(parameter.name, value);
    else if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = value;
  }
  let body: string | Uint8Array | undefined;
  if (operation.body?.mediaType === 'application/json') {
    const fill = (name: string) => {
      const slot = operation.slots.find((candidate) => candidate.in === 'body' && candidate.name.split('.').pop() === name);
      return slot ? valueOf(slot) : undefined;
    };
    body = JSON.stringify(minimalValue(operation.body.schema, operation.components, fill));
    headers['content-type'] = 'application/json';
  } else if (operation.body) {
    body = new Uint8Array();
    headers['content-type'] ??= operation.body.mediaType;
  }
  const search = query.size > 0 ? `?${query.toString()}` : '';
  return { method: operation.method, url: `${gateway.baseUrl}/v1${path}${search}`, headers, body };
}

interface Answer {
  status: number;
  problemType?: string;
  /** The body and every header value, as sent. */
  raw: string;
}

async function send(request: Request): Promise<Answer> {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual' });
  const body = Buffer.from(await response.arrayBuffer()).toString('utf8');
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  let problemType: string | undefined;
  if (/problem\+json|json/.test(response.headers.get('content-type') ?? '') && body) {
    try {
      problemType = (JSON.parse(body) as { type?: string }).type;
    } catch {
      problemType = undefined;
    }
  }
  return { status: response.status, problemType, raw: `${headers}\n\n${body}` };
}

/**
 * A's values found in the answer. The ids B itself sent are left out (an echo of the request tells
 * nothing): an answer that found A's resource is a 2xx unlike the control's, or holds its other ids.
 */
function leaksIn(answer: Answer, a: SeededTenant, sent: string): string[] {
  const raw = answer.raw.toLowerCase();
  const echoes = sent.toLowerCase();
  const ids = [a.tenantId, a.userId, ...Object.values(a.ids)];
  return [...ids.filter((id) => !echoes.includes(id.toLowerCase())), ...a.secrets, a.email]
    .filter((value) => raw.includes(value.toLowerCase()));
}

/** The kinds a slot is tried with: what its name tells, or every kind whose id its schema accepts. */
function kindsToTry(slot: IdSlot, everyKind: boolean, a: SeededTenant): IdKind[] {
  const kinds = everyKind ? ID_KINDS : slot.kinds;
  return kinds.filter((kind) => acceptsId(slot, a.ids[kind]));
}

async function tryCall(gateway: TestGateway, operation: Operation, slot: IdSlot, kind: IdKind, a: SeededTenant, b: SeededTenant): Promise<Call> {
  // The other slots hold B's own id of their kind (a fresh id where B has none the schema takes);
  // optional body members are left out (a hold's body may repeat the path's id, and must then match).
  const values = (target: string) => new Map(operation.slots.flatMap((other): [IdSlot, string][] => {
    if (other === slot) return [[other, target]];
    if (!other.required) return [];
    const own = other.kinds.map((candidate) => b.ids[candidate]).find((id) => acceptsId(other, id));
    return [[other, own ?? controlIdOf(a.ids[kind])]];
  }));
  const attempt = requestOf(gateway, operation, b.token, values(a.ids[kind]));
  const control = requestOf(gateway, operation, b.token, values(controlIdOf(a.ids[kind])));
  const answer = await send(attempt);
  const controlAnswer = await send(control);
  const call: Call = {
    operation, slot, kind, method: operation.method, url: attempt.url.replace(gateway.baseUrl, ''),
    status: answer.status, problemType: answer.problemType, controlStatus: controlAnswer.status, controlProblemType: controlAnswer.problemType,
    outcome: 'violation',
  };
  const leaks = leaksIn(answer, a, `${attempt.url}\n${String(attempt.body ?? '')}`);
  const sameAsControl = answer.status === controlAnswer.status && answer.problemType === controlAnswer.problemType;
  if (leaks.length > 0) return { ...call, note: `A's values in the answer: ${leaks.join(', ')}` };
  if (answer.status >= 200 && answer.status < 300) {
    const ownScope = slot.freeText || operation.method === 'OPTIONS' || operation.operationId in OWN_SCOPE;
    return ownScope && sameAsControl ? { ...call, outcome: 'own-scope' } : { ...call, note: `${answer.status} for A's ${kind}` };
  }
  if (!sameAsControl) return { ...call, note: `${answer.status} ${answer.problemType ?? ''} for A's ${kind}, ${controlAnswer.status} ${controlAnswer.problemType ?? ''} for an unknown id` };
  if (answer.status === 404) return { ...call, outcome: '404' };
  if (answer.status === 403) return { ...call, outcome: '403' };
  if (answer.status >= 400 && answer.status < 500) return { ...call, outcome: 'refused-regardless', note: `${answer.status} ${answer.problemType ?? ''}: ${answer.raw.split('\n\n').slice(1).join('').slice(0, 300)}` };
  return { ...call, note: `${answer.status} ${answer.problemType ?? ''}` };
}

/** Seeds A and B, snapshots A, makes every call, and compares A's rows afterwards. */
export async function runCrossTenant(gateway: TestGateway, owner: DatabasePool, options: RunOptions = {}): Promise<RunReport> {
  const [a, b] = await Promise.all([seedTenant(gateway, owner), seedTenant(gateway, owner)]);
  const operations = operationsWithIds(await fetchDocuments(gateway), [...Object.values(a.ids)]);
  const before = await settledSnapshot(owner, a.tenantId);
  const work = operations.flatMap((operation) => operation.slots.flatMap((slot) => kindsToTry(slot, options.everyKind ?? false, a).map((kind) => ({ operation, slot, kind }))));
  const calls: Call[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, async () => {
    while (next < work.length) {
      const { operation, slot, kind } = work[next++];
      calls.push(await tryCall(gateway, operation, slot, kind, a, b));
    }
  }));
  const after = await snapshotTenant(owner, a.tenantId);
  return { operations, calls, changedTables: changedTables(before, after), tenants: { a, b } };
}

/** One line of a call: the request, what B got, what the control got, and why it is what it is. */
export function describeCall(call: Call): string {
  const answer = (status: number, type?: string) => `${status}${type ? ` ${type.split('/').pop()}` : ''}`;
  return `${call.method} ${call.operation.path} [${call.slot.in} ${call.slot.name} = A's ${call.kind}] → ${answer(call.status, call.problemType)}`
    + ` (control ${answer(call.controlStatus, call.controlProblemType)})${call.note ? `: ${call.note}` : ''}`;
}

const OUTCOMES: readonly Outcome[] = ['404', '403', 'refused-regardless', 'own-scope', 'violation'];

/** Calls per outcome, overall. */
export function outcomeCounts(calls: readonly Call[]): Record<Outcome, number> {
  const counts = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0])) as Record<Outcome, number>;
  for (const call of calls) counts[call.outcome] += 1;
  return counts;
}

/** The operations × outcome table of a run, one row per operation, as plain text. */
export function outcomeTable(report: RunReport): string {
  const rows = report.operations.map((operation) => {
    const counts = outcomeCounts(report.calls.filter((call) => call.operation === operation));
    return [`${operation.method} ${operation.path}`, ...OUTCOMES.map((outcome) => String(counts[outcome] || '.'))];
  });
  const header = ['operation', ...OUTCOMES];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}
