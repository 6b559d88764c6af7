import { MAX_HOLD_TTL_SECONDS, parseHoldTtl } from '../../../services/money/hold-ttl';

/** The hold TTL grammar of docs/reference/money.md#rule-7, rule by rule with its examples. */
describe('parseHoldTtl', () => {
  it.each([
    ['1s', 1], ['90s', 90], ['30m', 1800], ['72h', 72 * 3600], ['7d', 7 * 86_400], ['168h', MAX_HOLD_TTL_SECONDS],
    ['PT30M', 1800], ['PT1S', 1], ['P1DT12H', 36 * 3600], ['PT1H30M15S', 5415], ['P7D', 7 * 86_400],
  ])('accepts %s as %i s', (text, seconds) => {
    expect(parseHoldTtl(text)).toBe(seconds);
  });

  it.each([
    '0s', 'PT0S', '169h', '8d', 'P7DT1S', '', 'P', 'PT', '3 hours', '1.5h', '-1h', 'h', '10', 'P1M', 'P1W', 'PT1.5H', '1H',
  ])('refuses %p', (text) => {
    expect(parseHoldTtl(text)).toBeNull();
  });
});
