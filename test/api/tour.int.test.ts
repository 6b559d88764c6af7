import { runTour, type TourReport } from '../../scripts/tour/run';
import { AREAS } from '../../scripts/tour/steps';
import { startTestGateway, type TestGateway } from '../helpers/app';
import { migrateSharedDatabase } from '../helpers/db';

/**
 * The tour of `npm run tour` (scripts/tour/) against a gateway of this test, HTTP and its gRPC
 * EventService, so the tour stays true as the API changes. The gateway is the code of the work
 * tree; what it hands on runs where the platform runs it (`npm run up`, which `npm test` starts
 * with): the mail, money and scan workflows on the platform's workers, the outbox relay, the audit
 * consumer, Mailpit. The test names every step it expects, so a step that stops running (an area
 * skipped, a step dropped) fails it as surely as a step that fails.
 */
jest.setTimeout(300_000);

const EXPECTED_STEPS = [
  'identity: register a new tenant',
  'identity: verification e-mail in Mailpit',
  'identity: verify the e-mail',
  'identity: login',
  'identity: refresh',
  'identity: /auth/me',
  'identity: /auth/me without a token',
  'rbac: create a role with settings.read',
  'rbac: invite a second user',
  'rbac: invitation e-mail in Mailpit',
  'rbac: accept the invitation',
  'rbac: member may not GET /gateway/hello/secure',
  'rbac: assign the role to the member',
  'rbac: member may GET /gateway/hello/secure',
  'rbac: register another tenant',
  "rbac: another tenant's role is 404",
  "rbac: another tenant's user is 404",
  'billing: plans',
  'billing: subscription',
  'billing: usage',
  'modules: catalogue lists crm',
  'modules: install crm',
  'modules: crm models',
  'data: create a company with two contacts',
  'data: create a contact',
  'data: query: filter, select, order, count',
  'data: query: embed the company',
  'data: update a contact',
  'data: delete a contact',
  'data: the deleted contact is gone',
  'files: upload a PNG (multipart)',
  'files: upload a text file (multipart)',
  'files: both pass the malware scan',
  'files: download the text file',
  'files: download the PNG through its presigned URL',
  'files: upload the EICAR test string',
  'files: the scan rejects it',
  'money: create wallet A',
  'money: create wallet B',
  'money: credit A 100.00 with an Idempotency-Key',
  'money: the same key and body answer the same',
  'money: the same key with another body is 409',
  'money: transfer 25.00 from A to B',
  'money: the transfer repeated with its key answers the same',
  'money: balances after the transfer',
  'money: hold 10.00 on A',
  'money: confirm the hold',
  'money: balances after the hold',
  'events: REST publish crm.contact.created',
  'events: REST publish repeated with its key',
  'events: gRPC ListTopics',
  'events: gRPC Publish crm.contact.updated',
  'events: gRPC Subscribe to platform.auth.events',
  'events: create a user while subscribed',
  'events: the stream delivers auth.user.created',
  'events: end the stream, then gRPC Unsubscribe',
  'integrations: create an API key',
  'integrations: the key lists users (X-API-Key)',
  'integrations: the key may not read roles',
  'integrations: register a webhook endpoint for crm.contact.*',
  'integrations: the key publishes crm.contact.created',
  'integrations: the receiver gets it, signed',
  "integrations: the endpoint's attempts",
  "integrations: the caller's sessions",
  'integrations: revoke the key',
  'integrations: delete the endpoint',
  'audit: write an audit record',
  'audit: read it back',
  'audit: the trail of the tour entity',
  'audit: the trail shows the earlier steps',
  'jobs: process the PNG (resize)',
  'jobs: follow /v1/jobs/{id} until completed',
  'jobs: an unknown job is 404',
  'health: /live',
  'health: /ready',
  'health: /health without a token',
  'health: /health as a member',
  'health: /health as the owner (admin)',
];

let gateway: TestGateway;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway({ waitUntilReady: true });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
});

describe('npm run tour', () => {
  let report: TourReport;
  const lines: string[] = [];

  beforeAll(async () => {
    report = await runTour({
      url: gateway.baseUrl, grpc: gateway.grpcAddress, mailpit: gateway.config.mail.mailpitApiUrl, write: (line) => lines.push(line),
    });
  });

  it('passes every step, and ends with the summary', () => {
    // What the steps that did not pass got: the tour's own line for each.
    expect(report.steps.filter((step) => step.outcome !== 'passed').map((step) => `${step.area}: ${step.name} → ${step.detail}`)).toEqual([]);
    expect(report).toMatchObject({ failed: 0, skipped: 0, passed: EXPECTED_STEPS.length });
    const perArea = AREAS.map((area) => {
      const count = EXPECTED_STEPS.filter((step) => step.startsWith(`${area}:`)).length;
      return `${area} ${count}/${count}`;
    });
    expect(lines.slice(-2)).toEqual([
      expect.stringMatching(new RegExp(`^✓ tour: ${EXPECTED_STEPS.length} passed, 0 failed, 0 area\\(s\\) skipped in \\d+\\.\\d s against ${gateway.baseUrl}$`)),
      `  ${perArea.join(' · ')}`,
    ]);
  });

  it('ran every step of every area, in order', () => {
    expect(report.steps.map((step) => `${step.area}: ${step.name}`)).toEqual(EXPECTED_STEPS);
    expect(new Set(report.steps.map((step) => step.area))).toEqual(new Set(AREAS));
    for (const step of report.steps) expect(lines).toContain(`✓ ${step.area}: ${step.name} → ${step.detail} (${step.ms} ms)`);
  });
});
