import { openLoop, percentile } from '../lib/load';
import { draw, login, type BenchTenant, type Call } from './mix';

/**
 * The load's clock: requests arrive at a fixed rate whatever the platform's answers (an open loop,
 * as users arrive), each drawn from the mix for a tenant drawn at random. A platform slower than the
 * rate piles requests up in flight, up to a bound past which arrivals are counted as shed rather
 * than sent, so an overload shows in the report instead of hiding in a slower arrival rate.
 */

/** What one route family was answered. */
export interface FamilyRecord {
  latencies: number[];
  /** Failed answers by kind: `<status> <problem type>`, or `no answer <code>`. 429s are counted apart. */
  errors: Map<string, number>;
  rateLimited: number;
}

/** A minute of the run: what was answered and how fast, to show the latency holds over a soak. */
export interface Minute { minute: number; answered: number; p99: number }

export class Recorder {
  readonly families = new Map<string, FamilyRecord>();
  readonly operations = new Map<string, number>();
  shed = 0;
  private readonly minutes = new Map<number, number[]>();

  constructor(private readonly started: number) {}

  note(family: string, operation: string, latencyMs: number, answer: { status: number; text: string } | Error): void {
    const record = this.families.get(family) ?? { latencies: [], errors: new Map<string, number>(), rateLimited: 0 };
    this.families.set(family, record);
    this.operations.set(operation, (this.operations.get(operation) ?? 0) + 1);
    if (answer instanceof Error) {
      record.errors.set(`no answer ${answer.message}`, (record.errors.get(`no answer ${answer.message}`) ?? 0) + 1);
    } else if (answer.status === 429) {
      record.rateLimited += 1;
    } else if (answer.status >= 400) {
      const kind = `${answer.status} ${problemType(answer.text)}`;
      record.errors.set(kind, (record.errors.get(kind) ?? 0) + 1);
    } else {
      record.latencies.push(latencyMs);
      const minute = Math.floor((Date.now() - this.started) / 60_000);
      const window = this.minutes.get(minute) ?? [];
      window.push(latencyMs);
      this.minutes.set(minute, window);
    }
  }

  byMinute(): Minute[] {
    return [...this.minutes].map(([minute, latencies]) => {
      latencies.sort((a, b) => a - b);
      return { minute, answered: latencies.length, p99: percentile(latencies, 99) };
    });
  }
}

/** The problem's type as its last path segment (`insufficient-funds`), or what the body was when it was none. */
function problemType(text: string): string {
  try {
    const type = (JSON.parse(text) as { type?: unknown }).type;
    return typeof type === 'string' ? type.slice(type.lastIndexOf('/') + 1) : 'not a problem';
  } catch {
    return 'not JSON';
  }
}

/** Access tokens live 15 minutes (ACCESS_TOKEN_TTL_SECONDS): a tenant's owner signs in again after 10. */
const TOKEN_REFRESH_MS = 10 * 60_000;

export interface DriveOptions { seconds: number; rate: number; maxInFlight: number; random: () => number }

/** Sends the mix at `rate` per second for `seconds`, then waits for the answers still due. */
export async function drive(call: Call, tenants: readonly BenchTenant[], recorder: Recorder, options: DriveOptions): Promise<void> {
  const { seconds, rate, maxInFlight, random } = options;
  const send = async (tenant: BenchTenant) => {
    if (Date.now() - tenant.tokenAt > TOKEN_REFRESH_MS) await timed(recorder, 'identity: login', 'POST /auth/login', () => login(call, tenant));
    const operation = draw(random);
    await timed(recorder, operation.family, operation.name, () => operation.send(call, tenant, random));
  };
  const run = await openLoop({ rate, seconds, maxInFlight }, () => send(tenants[Math.floor(random() * tenants.length)]));
  recorder.shed += run.shed;
}

async function timed(recorder: Recorder, family: string, operation: string, send: () => Promise<{ status: number; text: string }>): Promise<void> {
  const t0 = performance.now();
  const answer = await send().catch((error: NodeJS.ErrnoException) => new Error(error.code ?? error.message));
  recorder.note(family, operation, performance.now() - t0, answer);
}
