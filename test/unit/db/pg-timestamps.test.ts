import { isoOfPgTimestamp } from '../../../db/pool';

describe('PostgreSQL timestamps as ISO 8601', () => {
  it.each([
    ['2024-05-01 10:00:00.5+00', '2024-05-01T10:00:00.500Z'],
    ['2024-05-01 10:00:00+02', '2024-05-01T08:00:00.000Z'],
    ['2024-05-01 10:00:00.123456-05:30', '2024-05-01T15:30:00.123Z'],
    // A year below 100, which V8 reads as an Invalid Date unless the text is ISO (an audit export's range).
    ['0013-10-06 16:01:19.638+00', '0013-10-06T16:01:19.638Z'],
    // Local mean time before 1901: an offset with seconds.
    ['1850-01-01 00:00:00+00:53:28', '1849-12-31T23:06:32.000Z'],
  ])('%s', (text, iso) => {
    expect(isoOfPgTimestamp(text)).toBe(iso);
  });
});
