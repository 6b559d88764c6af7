/**
 * Which route pattern applies to a path that two patterns match: `/wallets/transfer` and
 * `/wallets/:id` both match `/wallets/transfer`, and the one a reader of the API means is the
 * literal one. At the first segment where one pattern has a literal and the other a parameter, the
 * literal's pattern is the more specific and applies; the other does not serve that path at all
 * (so its methods are not in the path's `Allow`, and its handler never sees the path).
 */

const segmentsOf = (pattern: string): string[] => pattern.split('/').filter(Boolean);
const isParam = (segment: string): boolean => segment.startsWith(':');

/** Negative when `a` is the more specific of two patterns matching one path, positive when `b` is, 0 when neither. */
export function compareSpecificity(a: string, b: string): number {
  const first = segmentsOf(a);
  const second = segmentsOf(b);
  for (let i = 0; i < Math.min(first.length, second.length); i += 1) {
    const difference = Number(isParam(first[i])) - Number(isParam(second[i]));
    if (difference !== 0) return difference;
  }
  return 0;
}

/** Of the patterns that match one path, those that apply: the most specific. */
export function mostSpecific<T>(items: readonly T[], patternOf: (item: T) => string): T[] {
  if (items.length === 0) return [];
  const best = items.reduce((kept, item) => (compareSpecificity(patternOf(item), patternOf(kept)) < 0 ? item : kept));
  return items.filter((item) => compareSpecificity(patternOf(item), patternOf(best)) === 0);
}

/**
 * When the more specific `shadow` takes a path away from `pattern`: the parameter values of
 * `pattern` that spell the shadow's literals (`/wallets/:id` loses `id = transfer` to
 * `/wallets/transfer`). Null when the shadow never matches a path of `pattern`, or is not more specific.
 */
export function shadowedWhen(pattern: string, shadow: string): [param: string, literal: string][] | null {
  const own = segmentsOf(pattern);
  const other = segmentsOf(shadow);
  if (own.length !== other.length || compareSpecificity(shadow, pattern) >= 0) return null;
  const when: [string, string][] = [];
  for (let i = 0; i < own.length; i += 1) {
    if (isParam(own[i]) && !isParam(other[i])) when.push([own[i].slice(1), other[i]]);
    else if (!isParam(own[i]) && !isParam(other[i]) && own[i] !== other[i]) return null;
  }
  return when;
}
