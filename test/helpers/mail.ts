import type { Worker } from '@temporalio/worker';
import { createNotifyActivities } from '../../activities/notify/mail.activities';
import { config } from '../../common/config';
import { createLogger } from '../../common/logger';
import { createSmtpSender } from '../../services/notify/smtp';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './app';
import { waitFor } from './http';
import { connectDevServer, createTestWorker, terminateRunningOn, uniqueTaskQueue } from './temporal';

/**
 * E-mail in tests: the real mail path (gateway → sendEmail workflow on the Temporal dev server →
 * deliverEmail activity → SMTP → Mailpit), read back through Mailpit's HTTP API. Every test mails
 * fresh addresses, so a search by recipient finds only its own messages.
 */

export interface MailpitMessage {
  id: string;
  messageId: string;
  subject: string;
  to: string[];
  text: string;
  html: string;
}

interface SearchResult {
  messages: { ID: string; Subject: string }[];
}

interface MessageDetail {
  ID: string;
  MessageID: string;
  Subject: string;
  To: { Address: string }[];
  Text: string;
  HTML: string;
}

async function mailpit<T>(path: string): Promise<T> {
  const response = await fetch(`${config().mail.mailpitApiUrl}/api/v1${path}`);
  if (!response.ok) throw new Error(`Mailpit ${path} answered ${response.status}`);
  return response.json() as Promise<T>;
}

/** Every message to `address` (newest first), read in full. */
export async function mailsTo(address: string): Promise<MailpitMessage[]> {
  const found = await mailpit<SearchResult>(`/search?query=${encodeURIComponent(`to:"${address}"`)}`);
  return Promise.all(found.messages.map(async ({ ID }) => {
    const detail = await mailpit<MessageDetail>(`/message/${ID}`);
    return {
      id: detail.ID, messageId: detail.MessageID, subject: detail.Subject,
      to: detail.To.map((to) => to.Address), text: detail.Text, html: detail.HTML,
    };
  }));
}

/** Waits until at least `count` messages to `address` have arrived and answers them (newest first). */
export async function waitForMails(address: string, count = 1, timeoutMs = 30_000): Promise<MailpitMessage[]> {
  let mails: MailpitMessage[] = [];
  await waitFor(`${count} mail(s) to ${address}`, async () => {
    mails = await mailsTo(address);
    return mails.length >= count;
  }, timeoutMs, 100);
  return mails;
}

/** The first mail to `address`, or with `subject` the first one with that subject (an address may get several kinds). */
export async function waitForMail(address: string, subject?: string, timeoutMs = 30_000): Promise<MailpitMessage> {
  let found: MailpitMessage | undefined;
  await waitFor(`a mail to ${address}${subject ? ` "${subject}"` : ''}`, async () => {
    found = (await mailsTo(address)).find((mail) => subject === undefined || mail.subject === subject);
    return found !== undefined;
  }, timeoutMs, 100);
  return found!;
}

/** The one-time token of a mail's link (docs/decisions/notify.md, Sending e-mail: `token=<value>` in the query). */
export function linkToken(mail: MailpitMessage): string {
  const match = /[?&]token=([A-Za-z0-9_-]{43})\b/.exec(mail.text);
  if (!match) throw new Error(`no token link in mail "${mail.subject}": ${mail.text}`);
  return match[1];
}

export interface MailGateway {
  gateway: TestGateway;
  /** The notify task queue of this test's own worker (the platform's worker runs older code). */
  taskQueue: string;
  close(): Promise<void>;
}

/**
 * A test gateway whose mail workflows go to a task queue of this test, served by a worker of this
 * test with the real notify activities (SMTP to Mailpit), on the Temporal dev server.
 */
export async function startMailGateway(options: TestGatewayOptions = {}): Promise<MailGateway> {
  const server = await connectDevServer();
  const taskQueue = uniqueTaskQueue('notify');
  const smtp = createSmtpSender(config().mail);
  const worker: Worker = await createTestWorker(server, {
    taskQueue,
    activities: createNotifyActivities({ smtp, logger: createLogger('test-notify', 'silent') }),
  });
  const running = worker.run();
  const gateway = await startTestGateway({ ...options, env: { NOTIFY_TASK_QUEUE: taskQueue, ...options.env } });
  return {
    gateway,
    taskQueue,
    async close() {
      await gateway.close();
      worker.shutdown();
      await running;
      smtp.close();
      await terminateRunningOn(server.client, taskQueue);
      await server.close();
    },
  };
}
