import { status } from '@grpc/grpc-js';
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import { TypedSearchAttributes, type SearchAttributePair } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { platformSearchAttributeKeys } from './search-attributes';

type Key = SearchAttributePair['key'];

/**
 * Registers the platform's search attributes (common/temporal/search-attributes.ts) in a namespace
 * where they are missing, as scripts/infra/services/temporal.sh does for the platform's own server.
 * For the servers the tests start or reach: the time-skipping test server refuses a start whose
 * search attributes it does not know, and knows none until told. An attribute registered with
 * another type cannot be changed in place, so that is an error naming it.
 */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const registered = await registeredTypes(connection, namespace);
  for (const key of platformSearchAttributeKeys) {
    const type = registered?.get(key.name);
    if (type === indexedValueType(key)) continue;
    if (type !== undefined) {
      throw new Error(`The search attribute ${key.name} is registered in namespace ${namespace} with another type than `
        + `${TypedSearchAttributes.toMetadataType(key.type)} (infra/temporal/search-attributes.txt); remove it and register it again`);
    }
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: { [key.name]: indexedValueType(key) } });
    } catch (error) {
      // Registered meanwhile (another test file against the same server), or before on a server that cannot list them.
      if (!isGrpcServiceError(error) || error.code !== status.ALREADY_EXISTS) throw error;
    }
  }
}

/**
 * The custom attributes the namespace has, by name; undefined from a server that does not list them
 * (the time-skipping test server implements only AddSearchAttributes of the operator service).
 */
async function registeredTypes(connection: Connection, namespace: string): Promise<Map<string, number> | undefined> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    return new Map(Object.entries(customAttributes ?? {}));
  } catch (error) {
    if (isGrpcServiceError(error) && error.code === status.UNIMPLEMENTED) return undefined;
    throw error;
  }
}

/** The server's enum value of the key's type (the SDK maps every type it defines). */
function indexedValueType(key: Key): number {
  const type = encodeSearchAttributeIndexedValueType(key.type);
  if (type === undefined) throw new Error(`No indexed value type for the search attribute type ${key.type}`);
  return type;
}
