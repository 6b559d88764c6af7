/**
 * One serialization of a JSON value for hashing and comparing: the audit hash chain
 * (services/audit/chain.ts), the idempotency request hash (services/idempotency/idempotent.ts) and the
 * event schemas' comparison (services/events/schema-compat.ts) all need equal values to give equal
 * text. It knows no domain, so it lives in the kernel, below every service that uses it.
 */

export class CanonicalJsonError extends Error {
  override name = 'CanonicalJsonError';
}

/**
 * JSON with object members sorted by key (UTF-16 code units, as RFC 8785 does), no whitespace,
 * strings and numbers written as JSON.stringify writes them, and undefined members left out. Two
 * values that are equal as JSON give the same text whatever order their keys were built in, which is
 * what the hash needs: jsonb does not keep key order.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
    case 'number':
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
      const prototype = Object.getPrototypeOf(value) as unknown;
      if (prototype !== Object.prototype && prototype !== null) {
        throw new CanonicalJsonError(`Only plain JSON values can be hashed, not ${value.constructor?.name ?? 'this object'}`);
      }
      const members = Object.keys(value)
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
      return `{${members.join(',')}}`;
    }
    default:
      throw new CanonicalJsonError(`A ${typeof value} is not a JSON value`);
  }
}
