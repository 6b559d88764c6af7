import { newSpanId, newTraceId } from '../../common/ids';

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): `traceparent` is
 * `version-traceid-parentid-flags` in lower-case hex. A caller's trace is continued; a missing or
 * malformed header starts a new trace, as the specification asks (never reject the request).
 */
export interface TraceContext {
  traceId: string;
  /** This hop's span id; the caller's span id is its parent. */
  spanId: string;
  flags: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/** The caller's trace id and flags, or null when the header is absent or invalid. */
export function parseTraceparent(header: string | undefined): { traceId: string; parentId: string; flags: string } | null {
  const match = header ? TRACEPARENT.exec(header.trim()) : null;
  if (!match) return null;
  const [, version, traceId, parentId, flags, rest] = match;
  // Version ff is forbidden; version 00 has exactly four fields, later versions may append more.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return null;
  return { traceId, parentId, flags };
}

/**
 * Continues the caller's trace or starts one. A new trace is marked sampled (01): the gateway is
 * the edge and records every request in its logs under this id.
 */
export function traceContextFor(header: string | undefined): TraceContext {
  const parent = parseTraceparent(header);
  return { traceId: parent?.traceId ?? newTraceId(), spanId: newSpanId(), flags: parent?.flags ?? '01' };
}

export function formatTraceparent({ traceId, spanId, flags }: TraceContext): string {
  return `00-${traceId}-${spanId}-${flags}`;
}
