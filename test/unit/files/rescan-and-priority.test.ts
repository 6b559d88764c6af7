import { signatureVersionOf } from '../../../services/files/rescan';
import { BACKLOG_SCAN_PRIORITY, scanPriorityOf } from '../../../services/files/scan-client';

/** What the re-scan compares (clamd's VERSION answer) and when a scan jumps the backlog, rule by rule. */
describe('signatureVersionOf', () => {
  it.each([
    ['ClamAV 1.0.7/27500/Tue Nov 25 08:00:00 2026\n', '1.0.7/27500'],
    ['ClamAV 1.4.6/27811/Mon Nov 24 09:41:02 2026', '1.4.6/27811'],
    // Only local signature files loaded (this repository's clamd): the engine alone.
    ['ClamAV 1.4.6\n', '1.4.6'],
  ])('reads %p as %p (the date only follows the database)', (answer, version) => {
    expect(signatureVersionOf(answer)).toBe(version);
  });

  it.each([[''], ['PONG\n'], ['UNKNOWN COMMAND\n']])('refuses an answer that is not a version: %p', (answer) => {
    expect(() => signatureVersionOf(answer)).toThrow(/not ClamAV's/);
  });
});

describe('scanPriorityOf', () => {
  it.each([
    [0, 1000, undefined],
    [1000, 1000, undefined],
    [1001, 1000, BACKLOG_SCAN_PRIORITY],
    [1, 0, BACKLOG_SCAN_PRIORITY],
  ])('with %p scans waiting and a threshold of %p: %p', (backlog, threshold, priority) => {
    expect(scanPriorityOf(backlog, threshold)).toEqual(priority);
  });

  it('goes before the default key (3) and the re-scan\'s (5)', () => {
    expect(BACKLOG_SCAN_PRIORITY.priorityKey).toBeLessThan(3);
  });
});
