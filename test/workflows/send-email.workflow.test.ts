import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ActivityFailure, ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createNotifyActivities } from '../../activities/notify/mail.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createSmtpSender, type SmtpSender } from '../../services/notify/smtp';
import { sendEmail } from '../../workflows/notify/send-email.workflow';
import { waitForMail } from '../helpers/mail';
import { createTestWorker, createTimeSkippingEnv, uniqueTaskQueue } from '../helpers/temporal';

/**
 * The sendEmail workflow under the time-skipping server, with the real activity and real SMTP
 * (Mailpit) behind a TCP relay of the test that can play a mail server outage.
 */
jest.setTimeout(60_000);

/** Relays SMTP connections to Mailpit, except that the first `failures` connections are dropped at once. */
async function flakySmtpRelay(failures: number): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    connections += 1;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (connections <= failures) {
      client.destroy();
      return;
    }
    const upstream = connect(config().mail.smtpPort, config().mail.smtpHost);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

/** A mail server that refuses every recipient for good (550), as for an address that does not exist. */
async function refusingSmtpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.write('220 refusing.test ESMTP\r\n');
    socket.on('data', (chunk) => {
      for (const line of chunk.toString().split('\r\n').filter(Boolean)) {
        if (/^RCPT/i.test(line)) socket.write('550 5.1.1 No such user\r\n');
        else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

describe('sendEmail workflow', () => {
  let env: TestWorkflowEnvironment;
  const logger = createLogger('test', 'silent');

  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  async function run(smtp: SmtpSender, to: string, idempotencyKey: string): Promise<void> {
    const taskQueue = uniqueTaskQueue('notify');
    const worker = await createTestWorker(env, { taskQueue, activities: createNotifyActivities({ smtp, logger }) });
    await worker.runUntil(env.client.workflow.execute(sendEmail, {
      taskQueue, workflowId: `notify.email:${idempotencyKey}`,
      args: [{ message: { to, template: 'notice', data: { subject: 'Outage test', text: 'First paragraph.\n\nSecond paragraph.' } }, idempotencyKey }],
    }));
  }

  it('retries while the mail server is unreachable, and the message arrives once it is back', async () => {
    const relay = await flakySmtpRelay(3);
    const smtp = createSmtpSender({ ...config().mail, smtpPort: relay.port });
    const to = `outage.${newId()}@example.test`;
    const idempotencyKey = `test:${newId()}`;
    try {
      await run(smtp, to, idempotencyKey);
    } finally {
      smtp.close();
      await relay.close();
    }

    expect(relay.connections()).toBe(4);
    const message = await waitForMail(to);
    expect(message.subject).toBe('Outage test');
    expect(message.text.replace(/\r\n/g, '\n')).toBe('First paragraph.\n\nSecond paragraph.\n');
    // The Message-ID is the idempotency key, so a copy resent after a lost acknowledgement is the same message.
    expect(message.messageId).toBe(`${idempotencyKey}@platform.local`);
  });

  it('does not retry a message the server refuses for good (5xx), and fails typed mail-rejected', async () => {
    const server = await refusingSmtpServer();
    const smtp = createSmtpSender({ ...config().mail, smtpPort: server.port });
    try {
      const failure = await run(smtp, `refused.${newId()}@example.test`, `test:${newId()}`).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const activityFailure = (failure as WorkflowFailedError).cause;
      expect(activityFailure).toBeInstanceOf(ActivityFailure);
      expect((activityFailure as ActivityFailure).retryState).toBe('NON_RETRYABLE_FAILURE');
      expect((activityFailure as ActivityFailure).cause).toBeInstanceOf(ApplicationFailure);
      expect(((activityFailure as ActivityFailure).cause as ApplicationFailure).type).toBe('mail-rejected');
    } finally {
      smtp.close();
      await server.close();
    }
  });
});
