import { loadPackageDefinition, type Client, type GrpcObject, type Metadata, type ServiceClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { join } from 'node:path';
import { repoRoot } from './paths';

/** Where the project's proto files live; imports inside them are relative to it (`platform/events/v1/…`). */
export const PROTO_ROOT = join(repoRoot, 'protos');

/**
 * Proto files of protos/ as @grpc/proto-loader reads them, the same way for the server, our scripts
 * and the tests. Field names stay as written (snake_case, docs/decisions/events.md, gRPC EventService); 64-bit integers
 * are decimal strings (no precision lost); absent fields read as their defaults, as in proto3. Server
 * reflection describes the services from this definition.
 */
export function loadProtoDefinition(files: string | string[]): PackageDefinition {
  return loadSync(files, { includeDirs: [PROTO_ROOT], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
}

/** A proto file of protos/ for @grpc/grpc-js (loadProtoDefinition). */
export function loadProto(file: string): GrpcObject {
  return loadPackageDefinition(loadProtoDefinition(file));
}

/** A service of a loaded proto by its full name (`package.Service`): its client class, whose `service` a server implements. */
export function serviceOf(file: string, fullName: string): ServiceClientConstructor {
  let node: unknown = loadProto(file);
  for (const part of fullName.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  if (typeof node !== 'function' || !('service' in node)) throw new Error(`${fullName} is not a service of ${file}`);
  return node as ServiceClientConstructor;
}

/** A unary call of a client made by serviceOf, as a promise; a failed call rejects with its ServiceError (code, details, metadata). */
export function unaryCall<Response>(client: Client, method: string, request: object, metadata: Metadata): Promise<Response> {
  const invoke = (client as unknown as Record<string, unknown>)[method];
  if (typeof invoke !== 'function') return Promise.reject(new Error(`the service has no method ${method}`));
  return new Promise((resolve, reject) => {
    invoke.call(client, request, metadata, (error: ServiceError | null, response: Response) => (error ? reject(error) : resolve(response)));
  });
}
