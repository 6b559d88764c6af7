import { judgeDrained } from '../../../bench/platform/drain';
import { postmasterOf, type Sampled } from '../../../bench/platform/processes';
import { growthOf, judgeGrowth } from '../../../bench/platform/soak';

/**
 * The soak's judges of `npm run bench:platform` (bench/platform/soak.ts, drain.ts), each shown
 * failing on the readings a broken platform would leave: a leak of memory or of open files, a
 * process that restarted, work left waiting once the load stopped.
 */

/** A process read every 5 s over ten minutes (or `seconds`), its memory and open files given as functions of the time. */
function process(name: string, kind: Sampled['kind'], memory: (at: number) => number, files: (at: number) => number, pid = () => 100, seconds = 600): Sampled {
  const readings = Array.from({ length: seconds / 5 + 1 }, (_, index) => {
    const at = index * 5;
    return { at, cpu: 0.2, memoryMiB: memory(at), openFiles: files(at), pid: pid() };
  });
  return { name, kind, readings };
}

const flat = () => 200;

it('passes processes whose memory and open files stay within 10 % after the warm-up', () => {
  // Growth during the warm-up (the first two minutes) is not judged; a GC's saw-tooth after it stays in the band.
  const warming = process('api', 'application', (at) => (at < 120 ? 100 + at : 220 + (at % 20)), () => 40);
  const growth = growthOf([warming, process('worker', 'application', flat, flat)], 120, 600);
  expect(judgeGrowth(growth)).toEqual([]);
  expect(growth[0].memoryMiB[1] / growth[0].memoryMiB[0]).toBeLessThan(1.1);
});

it('passes a saw-tooth many minutes long and a process settling after deep teeth, and fails a step that stays', () => {
  // The audit consumer's in the same soak: three deep teeth in the first ten minutes, then flat.
  const settling = process('audit-consumer', 'application', (at) => (at < 600 ? 150 + ((at % 180) < 60 ? 0 : 60) : 208), () => 28, () => 100, 2400);
  expect(judgeGrowth(growthOf([settling], 300, 2400 - 60))).toEqual([]);
  // The relay's in the soak of 2026-11-29: a climb of 35 % over 19 minutes, then a full collection; the
  // run starts its judging just after one and ends it at the top of the next.
  const sawTooth = process('relay', 'application', (at) => 120 + ((at - 60 + 1140) % 1140) / 27, () => 25, () => 100, 2400);
  expect(judgeGrowth(growthOf([sawTooth], 60, 2400 - 60))).toEqual([]);
  // The gateway's before its malloc was tuned: +20 % in two steps at a third of the run, then flat.
  const stepped = process('api', 'application', (at) => (at < 800 ? 400 : at < 900 ? 440 : 480), () => 66, () => 100, 2400);
  expect(judgeGrowth(growthOf([stepped], 60, 2400 - 60))).toEqual([expect.stringMatching(/^api: memory grew from 4\d\d to 4\d\d MiB$/)]);
});

it('fails an application process whose memory grows steadily', () => {
  const leaking = process('api', 'application', (at) => 200 + at / 4, () => 40);
  expect(judgeGrowth(growthOf([leaking], 120, 600))).toEqual([expect.stringMatching(/^api: memory grew from \d+ to \d+ MiB$/)]);
});

it('fails an application process that leaks open files', () => {
  const leaking = process('worker', 'application', flat, (at) => 100 + Math.floor(at / 10));
  expect(judgeGrowth(growthOf([leaking], 120, 600))).toEqual([expect.stringMatching(/^worker: open files grew from \d+ to \d+$/)]);
});

it('reports a server filling its configured memory without judging it, but judges its restarts', () => {
  const filling = process('kafka', 'server', (at) => 300 + at, flat);
  expect(judgeGrowth(growthOf([filling], 120, 600))).toEqual([]);
  let reads = 0;
  const restarted = process('redis', 'server', flat, flat, () => (reads++ < 60 ? 100 : 101));
  expect(judgeGrowth(growthOf([restarted], 120, 600))).toEqual(['redis restarted 1 times']);
});

it('names every queue still holding work after the load', () => {
  expect(judgeDrained([{ name: 'kafka audit.store on platform.audit.events', waiting: 0 }, { name: 'postgres outbox', waiting: 0 }])).toEqual([]);
  expect(judgeDrained([{ name: 'temporal platform.money (activity tasks)', waiting: 3 }, { name: 'postgres outbox', waiting: 0 }]))
    .toEqual(['temporal platform.money (activity tasks): 3 still waiting']);
});

it('names PostgreSQL by its postmaster, whose backends come and go', () => {
  const backends = [{ pid: 300, parent: 120 }, { pid: 90, parent: 120 }, { pid: 410, parent: 120 }];
  expect(postmasterOf([...backends, { pid: 120, parent: 1 }])).toBe(120);
  expect(postmasterOf([{ pid: 120, parent: 1 }, ...backends.slice(1)])).toBe(120);
  expect(postmasterOf([])).toBeUndefined();
});
