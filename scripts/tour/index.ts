import { parseArgs } from 'node:util';
import { runTour } from './run';

/**
 * `npm run tour -- [--url http://127.0.0.1:8080] [--grpc 127.0.0.1:50051] [--mailpit http://127.0.0.1:8025]`
 *
 * A black-box tour of every area of the API, as a newcomer would walk it, against any base URL: one
 * gateway, the load balancer in front of several, or either of them while faults are injected. It is
 * a client only: REST with Node's fetch, the EventService with @grpc/grpc-js and the project's proto,
 * the e-mails through Mailpit's HTTP API. It never reads the database nor imports the gateway.
 * Every step prints one line (`✓ identity: register → 201 (34 ms)`, or `✗ … expected …, got …`);
 * a failed step ends its area, an area whose prerequisite failed is skipped, and the run ends with a
 * summary. Exit 0 when every step passed, 1 otherwise, 2 on a usage error.
 * test/api/tour.int.test.ts runs it (runTour of run.ts) against a test gateway so the tour stays true
 * as the API changes. This file is the command line only: its options and its exit code.
 */

async function main(): Promise<number> {
  let values: { url?: string; grpc?: string; mailpit?: string };
  try {
    ({ values } = parseArgs({ options: { url: { type: 'string' }, grpc: { type: 'string' }, mailpit: { type: 'string' } } }));
  } catch (error) {
    process.stderr.write(`tour: ${error instanceof Error ? error.message : String(error)}\n`
      + 'usage: npm run tour -- [--url http://127.0.0.1:8080] [--grpc 127.0.0.1:50051] [--mailpit http://127.0.0.1:8025]\n');
    return 2;
  }
  const report = await runTour({
    url: values.url ?? 'http://127.0.0.1:8080', grpc: values.grpc ?? '127.0.0.1:50051', mailpit: values.mailpit ?? 'http://127.0.0.1:8025',
  });
  return report.failed === 0 && report.skipped === 0 ? 0 : 1;
}

if (require.main === module) {
  main().then((code) => process.exit(code), (error: unknown) => {
    process.stderr.write(`tour: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  });
}
