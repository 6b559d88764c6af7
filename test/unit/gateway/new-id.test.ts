import { validate, version } from 'uuid';
import { newId } from '../../../common/ids';

/**
 * newId's UUID v7 from the pooled random bytes (common/ids.ts): valid, unique, and in the order
 * they were minted, also many within one millisecond and across the pool's refills (4 KiB, 256 ids).
 */
it('mints valid, unique UUID v7s in the order they were made, across pool refills', () => {
  const before = Date.now();
  const ids = Array.from({ length: 5_000 }, () => newId());
  const after = Date.now();

  expect(ids.every((id) => validate(id) && version(id) === 7)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  // Lexical order is creation order: what the primary-key indexes and keyset pages rely on.
  expect([...ids].sort()).toEqual(ids);
  // The first 48 bits are the millisecond.
  const msOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
  expect(msOf(ids[0])).toBeGreaterThanOrEqual(before);
  // A counter that wrapped may run one millisecond ahead; never further.
  expect(msOf(ids.at(-1)!)).toBeLessThanOrEqual(after + 1);
});
