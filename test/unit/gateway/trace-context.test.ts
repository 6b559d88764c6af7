import { formatTraceparent, parseTraceparent, traceContextFor } from '../../../api/http/trace-context';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('W3C traceparent', () => {
  it('parses a valid header', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual({ traceId: TRACE, parentId: PARENT, flags: '01' });
  });

  it.each([
    ['absent', undefined],
    ['garbage', 'hello'],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['the forbidden version ff', `ff-${TRACE}-${PARENT}-01`],
    ['extra fields on version 00', `00-${TRACE}-${PARENT}-01-extra`],
  ])('rejects %s', (_case, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });

  it('accepts extra fields from a later version', () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-00-future`)).toMatchObject({ traceId: TRACE, flags: '00' });
  });

  it('continues the caller’s trace with a new span of its own', () => {
    const context = traceContextFor(`00-${TRACE}-${PARENT}-00`);
    expect(context.traceId).toBe(TRACE);
    expect(context.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(context.spanId).not.toBe(PARENT);
    expect(formatTraceparent(context)).toBe(`00-${TRACE}-${context.spanId}-00`);
  });

  it('starts a sampled trace when there is none', () => {
    const context = traceContextFor(undefined);
    expect(formatTraceparent(context)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});
