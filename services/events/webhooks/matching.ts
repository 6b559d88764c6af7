import { EVENT_TYPE_PATTERN } from '../event-rules';

/**
 * Which events an endpoint receives (issue 35): each of its `eventTypes` is an exact type
 * (`auth.user.created`) or a prefix ending in `.*` (`auth.*`, `auth.user.*`), which matches every
 * type that starts with the prefix and its dot. So `auth.*` matches `auth.user.created` and not
 * `authz.user.created`; `auth.user.*` matches `auth.user.created` and not `auth.role.changed`.
 */

/** A prefix pattern: one or more lower-case segments, then `.*`. */
export const EVENT_TYPE_PREFIX_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*\.\*$/;

export function isEventTypeSelector(value: string): boolean {
  return EVENT_TYPE_PATTERN.test(value) || EVENT_TYPE_PREFIX_PATTERN.test(value);
}

export function selectorMatches(selector: string, type: string): boolean {
  return selector.endsWith('.*') ? type.startsWith(selector.slice(0, -1)) : selector === type;
}

export function endpointReceives(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.some((selector) => selectorMatches(selector, type));
}
