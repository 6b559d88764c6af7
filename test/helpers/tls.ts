import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { rootCertificates } from 'node:tls';
import type { Config } from '../../common/config';

/**
 * The local CA and server certificate of the native servers (scripts/infra/tls.sh, created by the
 * bring-up): PostgreSQL offers TLS on 5432, Redis on 6380 (rediss://), both with these files.
 */
export function localTls(dataDir: string) {
  const dir = join(dataDir, 'tls');
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
}

/** The TLS port of the local Redis (scripts/infra/services/redis.sh). */
export const REDIS_TLS_PORT = 6380;

/** A CA file of a real CA that signed none of the local certificates: a client trusting only it must refuse them. */
export function writeUnrelatedCa(path: string): string {
  writeFileSync(path, rootCertificates[0]);
  return path;
}

/** A free TCP port on 127.0.0.1 (free when asked; the caller binds it at once). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Relay {
  host: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A plain TCP relay on another loopback address (127.0.0.2) to a real server: the same server, dialled
 * under a name its certificate does not carry, which is how a client's host-name check is seen at work.
 */
export async function tcpRelay(target: { host: string; port: number }, host = '127.0.0.2'): Promise<Relay> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    host,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface HttpsObjectStore {
  port: number;
  stop(): Promise<void>;
}

/**
 * A second Versity S3 Gateway serving HTTPS with the local server certificate, on its own port and on
 * the same posix folder as the platform's store (scripts/infra/services/s3.sh starts that one on plain
 * http://127.0.0.1:9000), so the platform's bucket is there. Resolves once its health path answers
 * over TLS, verified against the local CA.
 */
export async function startHttpsObjectStore(dataDir: string, s3: Config['s3']): Promise<HttpsObjectStore> {
  const tls = localTls(dataDir);
  const port = await freePort();
  // The binary the bring-up installs (scripts/infra/install.sh), as test/api/fuzz/schemathesis.int.test.ts finds its tools.
  const binary = join(process.env.PLATFORM_CACHE ?? join(homedir(), '.cache', 'platform'), 'bin', 'versitygw');
  const child = spawn(binary, [
    '--port', `127.0.0.1:${port}`, '--cert', tls.certFile, '--key', tls.keyFile,
    '--region', s3.region, '--health', '/health', '--quiet', 'posix', join(dataDir, 's3'),
  ], { env: { ...process.env, ROOT_ACCESS_KEY: s3.accessKey, ROOT_SECRET_KEY: s3.secretKey }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let ended = false;
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  // 'error' alone when the binary cannot be started at all (no 'exit' follows).
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (error) => { stderr += error.message; resolve(); });
  }).then(() => { ended = true; });
  const stop = async () => {
    if (!ended) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 15_000;
  const ca = readFileSync(tls.caFile, 'utf8');
  while (!(await healthy(port, ca))) {
    if (ended || Date.now() > deadline) {
      await stop();
      throw new Error(`versitygw with TLS did not answer on ${port}: ${stderr || 'no output'}`);
    }
    await sleep(100);
  }
  return { port, stop };
}

function healthy(port: number, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path: '/health', ca, agent: false, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => request.destroy());
  });
}
