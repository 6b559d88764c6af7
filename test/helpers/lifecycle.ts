/**
 * What a test file (or a describe block) opens in beforeAll and closes in afterAll, reached through
 * the one object this answers at once: its fields are those `open` answers, copied in when beforeAll
 * has run, so a test file names `stack.owner` instead of declaring a variable per field and
 * assigning each of them in a beforeAll of its own.
 */
export function openedBeforeAll<T extends { close(): Promise<void> }>(open: () => Promise<T>): T {
  const opened = {} as T;
  let closable: T | undefined;
  beforeAll(async () => {
    closable = await open();
    Object.assign(opened, closable);
  });
  afterAll(async () => {
    await closable?.close();
  });
  return opened;
}
