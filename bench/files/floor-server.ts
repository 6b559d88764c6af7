import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { config } from '../../common/config';
import { temporalConnectionOptions } from '../../common/temporal/connection-options';
import { newId } from '../../common/ids';
import { createObjectStore, putStream } from '../../common/object-store';
import { platformDataConverter } from '../../common/temporal/data-converter';
import { readMultipartForm } from '../../services/files/multipart-form';
import { createClamdScanner } from '../../services/files/scanner';
import { detectType, FILE_PART } from '../../services/files/upload';
import { bundleWorkflows, createDomainWorker } from '../../workers/temporal/worker';
import { promoteDirectly } from './direct-work';
import type { benchFileFloor, FloorUpload } from './floor.workflow';

/**
 * The floor of bench/files.bench.ts: issue 17's upload with the structure the issue asks for and
 * nothing else. POST /upload?tenant=<id> reads the multipart form (busboy, as the gateway), detects
 * the file's type from its first bytes and streams it to staging (as the gateway), starts one
 * workflow for the file (bench/files/floor.workflow.ts) and answers 201 {id}; a Worker in this same
 * process runs it. GET /available?id=<id> answers the keys stored once the file's work is done
 * (long-polled: in-process, cheaper than any database poll or workflow result). No authentication,
 * permission, plan limit, row, usage, outbox event or audit record, and gateway and Worker share one
 * process and one Temporal connection: no platform can do the upload with less.
 */
async function main(): Promise<void> {
  const cfg = config();
  const store = createObjectStore(cfg.s3);
  const scanner = createClamdScanner(cfg.clamav);
  const connection = await NativeConnection.connect(temporalConnectionOptions(cfg.temporal));
  const dataConverter = await platformDataConverter(cfg.temporalCodec);
  const taskQueue = `bench.files-floor.${newId()}`;
  const available = new Completions<string[]>();
  const worker = await createDomainWorker({
    connection, namespace: cfg.temporal.namespace, taskQueue, dataConverter,
    workflowBundle: await bundleWorkflows(require.resolve('./floor.workflow')),
    activities: {
      async promoteStaged(upload: FloorUpload): Promise<string[]> {
        const keys = await promoteDirectly({ store, scanner }, upload.stagingKey, upload.prefix, upload.sizeBytes);
        available.complete(upload.id, keys);
        return keys;
      },
    },
  });
  // The SDK's Runtime answers SIGTERM (the bench ending) by shutting the Worker down, and the process
  // ends with it: the HTTP server and the store's kept-alive sockets would otherwise keep it running.
  void worker.run().then(() => process.exit(0));
  const client = new Client({ connection, namespace: cfg.temporal.namespace, dataConverter });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://floor');
    const [tenantId, id] = [url.searchParams.get('tenant'), url.searchParams.get('id')];
    if (request.method === 'POST' && url.pathname === '/upload' && tenantId) await upload(tenantId, request, response);
    else if (request.method === 'GET' && url.pathname === '/available' && id) response.end(JSON.stringify(await available.of(id)));
    else response.writeHead(404).end();
  }

  async function upload(tenantId: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const id = newId();
    const stagingKey = `${tenantId}/bench-staging/${id}`;
    const form = await readMultipartForm({ headers: request.headers, body: request }, {
      fileField: FILE_PART, maxFields: 4, maxFieldBytes: 4096, maxFileBytes: cfg.files.maxImageSizeBytes, tooLarge: () => new Error('over the image limit'),
    }, async (_fields, file) => {
      const typed = await detectType(file);
      return putStream(store, stagingKey, typed.stream, typed.mimeType);
    });
    await client.workflow.start<typeof benchFileFloor>('benchFileFloor', {
      workflowId: `bench.files-floor:${id}`, taskQueue, args: [{ id, stagingKey, prefix: `${tenantId}/bench-floor/${id}`, sizeBytes: form.file.bytes }],
    });
    response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
  }

  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      console.log(JSON.stringify({ level: 50, msg: 'floor upload failed', error: String(error) }));
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ msg: 'files floor listening', port: (server.address() as AddressInfo).port }));
  });
}

/** Values completed by id, each handed to whoever asks for it, before or after it completes, and then forgotten. */
class Completions<T> {
  private readonly done = new Map<string, T>();
  private readonly waiting = new Map<string, (value: T) => void>();

  complete(id: string, value: T): void {
    const waiter = this.waiting.get(id);
    this.waiting.delete(id);
    if (waiter) waiter(value);
    else this.done.set(id, value);
  }

  of(id: string): Promise<T> {
    const value = this.done.get(id);
    this.done.delete(id);
    if (value !== undefined) return Promise.resolve(value);
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }
}

void main();
