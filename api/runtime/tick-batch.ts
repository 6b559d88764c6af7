interface Call<Arg, Result> {
  arg: Arg;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * Calls made in the same turn of the event loop leave together: the first schedules a send with
 * setImmediate, which runs after every I/O callback of the turn (each request read in it), and the
 * send answers all of them with one round trip and one socket write. Under load a turn carries
 * several requests; when idle a call waits for nothing but the end of its turn. A call made while a
 * send is in flight goes with the next one, never joins it, so its answer is as fresh as the call.
 */
export class TickBatch<Arg, Result> {
  private pending: Call<Arg, Result>[] | null = null;

  /**
   * `send` answers the arguments in order, one result each; a result that is an Error fails its own
   * call, and if `send` throws, every call of the batch fails.
   */
  constructor(private readonly send: (args: readonly Arg[]) => Promise<ReadonlyArray<Result | Error>>) {}

  run(arg: Arg): Promise<Result> {
    return new Promise((resolve, reject) => {
      if (!this.pending) {
        this.pending = [];
        setImmediate(() => void this.flush());
      }
      this.pending.push({ arg, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const calls = this.pending!;
    this.pending = null;
    try {
      const results = await this.send(calls.map((call) => call.arg));
      calls.forEach((call, index) => {
        const result = results[index];
        if (result instanceof Error) call.reject(result);
        else call.resolve(result);
      });
    } catch (error) {
      calls.forEach((call) => call.reject(error));
    }
  }
}
