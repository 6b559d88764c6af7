import type { ServiceClientConstructor } from '@grpc/grpc-js';
import { serviceOf } from '../../common/proto';

/**
 * The gRPC EventService (docs/reference/events.md, Resources; protos/platform/events/v1/events.proto): the server
 * (api/grpc) implements it, our scripts and tests call it through this client class.
 */
export const EVENT_SERVICE_NAME = 'platform.events.v1.EventService';

let loaded: ServiceClientConstructor | undefined;

export function eventServiceClass(): ServiceClientConstructor {
  loaded ??= serviceOf('platform/events/v1/events.proto', EVENT_SERVICE_NAME);
  return loaded;
}
