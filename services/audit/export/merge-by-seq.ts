/**
 * Merges sources that are each sorted by seq into one sequence sorted by seq, holding one record
 * per source: the cold export reads every archived month of a range and the hot rows at once, in
 * chain order, without loading any of them whole. Every source is closed when the merge ends, also
 * early (an error, or a consumer that stopped reading).
 */
export async function* mergeBySeq<T extends { seq: number }>(sources: readonly AsyncIterable<T>[]): AsyncGenerator<T> {
  const iterators = sources.map((source) => source[Symbol.asyncIterator]());
  try {
    const heads = await Promise.all(iterators.map((iterator) => iterator.next()));
    for (;;) {
      let next = -1;
      for (const [index, head] of heads.entries()) {
        if (!head.done && (next < 0 || head.value.seq < (heads[next].value as T).seq)) next = index;
      }
      if (next < 0) return;
      yield heads[next].value as T;
      heads[next] = await iterators[next].next();
    }
  } finally {
    await Promise.allSettled(iterators.map((iterator) => Promise.resolve(iterator.return?.())));
  }
}
