import { TickBatch } from '../../../api/runtime/tick-batch';

describe('TickBatch', () => {
  it('sends the calls of one tick together, in order, and later calls in a new send', async () => {
    const sends: number[][] = [];
    const batch = new TickBatch<number, number>(async (args) => {
      sends.push([...args]);
      return args.map((arg) => arg * 10);
    });
    await expect(Promise.all([batch.run(1), batch.run(2), batch.run(3)])).resolves.toEqual([10, 20, 30]);
    await expect(batch.run(4)).resolves.toBe(40);
    expect(sends).toEqual([[1, 2, 3], [4]]);
  });

  it('never joins a send in flight: a call made meanwhile waits for the next one', async () => {
    const sends: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const batch = new TickBatch<number, number>(async (args) => {
      sends.push([...args]);
      if (sends.length === 1) await gate;
      return [...args];
    });
    const first = batch.run(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = batch.run(2);
    release();
    await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
    expect(sends).toEqual([[1], [2]]);
  });

  it('fails only the call whose result is an Error, and every call when the send throws', async () => {
    const partly = new TickBatch<number, number>(async (args) => args.map((arg) => (arg === 2 ? new Error('no count for 2') : arg)));
    const [one, two] = await Promise.allSettled([partly.run(1), partly.run(2)]);
    expect(one).toEqual({ status: 'fulfilled', value: 1 });
    expect(two).toMatchObject({ status: 'rejected', reason: { message: 'no count for 2' } });

    const down = new TickBatch<number, number>(async () => { throw new Error('Redis down'); });
    for (const call of [down.run(1), down.run(2)]) await expect(call).rejects.toThrow('Redis down');
  });
});
