import http from 'node:http';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createObjectStore } from '../../common/object-store';

/**
 * The object store the platform runs keeps its connections alive (versitygw --keep-alive,
 * scripts/infra/services/s3.sh): without it every S3 call of the gateway and the worker opened a
 * TCP connection of its own, about seven per upload. The client is the platform's (minio through
 * Node's global agent), so a connection the store lets stay open waits in the agent's free sockets.
 */

const cfg = config().s3;
const store = createObjectStore(cfg);
const key = `object-store-connections-test/${newId()}`;

afterAll(async () => {
  await store.s3.removeObject(store.bucket, key);
});

/** The agent's idle sockets to the store, each kept for the next request. */
const idleSockets = () => http.globalAgent.freeSockets[`${cfg.endPoint}:${cfg.port}:`] ?? [];

it('answers S3 calls on one connection, kept between them', async () => {
  await store.s3.putObject(store.bucket, key, Buffer.from('kept alive'));
  const [kept] = idleSockets();
  expect(kept).toBeDefined();
  await store.s3.statObject(store.bucket, key);
  await store.s3.statObject(store.bucket, key);
  expect(idleSockets()).toEqual([kept]);
});
