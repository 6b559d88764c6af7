import { z } from 'zod';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { config } from '../../common/config';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { ENCRYPTED_ENCODING } from '../../common/temporal/payload-codec';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { registerAccount } from '../helpers/identity';
import { linkToken, startMailGateway, waitForMail, type MailGateway } from '../helpers/mail';
import { connectDevServer, type DevServer } from '../helpers/temporal';

/**
 * The one-time token of an e-mail link travels to the mail activity as a workflow argument. With the
 * encrypting payload codec the Temporal server stores ciphertext only: the sendEmail workflow's
 * history on the dev server holds neither the token nor the address, while the mail (decrypted by
 * the worker) arrives with both.
 */
// The mail worker bundles the workflows first (webpack), which takes seconds on a busy machine.
jest.setTimeout(60_000);
let mail: MailGateway;
let server: DevServer;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  [mail, server] = await Promise.all([startMailGateway(), connectDevServer()]);
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'payload-encryption-test-owner' });
});

afterAll(async () => {
  await mail?.close();
  await server?.close();
  await owner?.end();
});

/** The byte strings anywhere in a decoded protobuf message. */
function bytesOf(value: unknown): Uint8Array[] {
  if (value instanceof Uint8Array) return [value];
  if (!value || typeof value !== 'object') return [];
  return Object.values(value).flatMap(bytesOf);
}

it('keeps the token of a verification link out of the sendEmail workflow history', async () => {
  const account = await registerAccount(mail.gateway);
  const token = linkToken(await waitForMail(account.user.email, 'Confirm your e-mail address'));
  const tokenId = await owner.oneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM one_time_tokens WHERE user_id = ${account.user.id} AND purpose = 'verify_email'
  `);

  const handle = server.client.workflow.getHandle(`notify.email:verify-email:${tokenId}`);
  await handle.result();
  const history = await handle.fetchHistory();
  // Every byte string of the history (payload data and metadata) as text, next to its JSON form.
  const stored = `${historyToJSON(history)}\n${bytesOf(history).map((bytes) => Buffer.from(bytes).toString('latin1')).join('\n')}`;
  expect(stored).toContain('binary/encrypted');
  expect(stored).not.toContain(token);
  expect(stored).not.toContain(account.user.email);

  const started = history.events?.find((event) => event.workflowExecutionStartedEventAttributes)?.workflowExecutionStartedEventAttributes;
  const input = started?.input?.payloads as Payload[];
  expect(input).toHaveLength(1);
  expect(Buffer.from(input[0].metadata!.encoding).toString()).toBe(ENCRYPTED_ENCODING);

  // The platform's codec opens it: this is the mail's argument, token included.
  const [decoded] = await (await platformDataConverter(config().temporalCodec)).payloadCodecs![0].decode(input);
  const argument = defaultPayloadConverter.fromPayload<{ message: { to: string; data: { link: string } } }>(decoded);
  expect(argument.message.to).toBe(account.user.email);
  expect(argument.message.data.link).toContain(`token=${token}`);
});
