import { readdir } from 'node:fs/promises';
import { committedSdkTypes, generateSdkTypes, SDK_TYPES_DIR } from '../../../scripts/sdk-generate';

/**
 * The typed REST client's types (sdk/rest/types/) are what the OpenAPI documents generate now: a
 * route added or changed without `npm run sdk:generate` fails here, naming the files to regenerate.
 */
jest.setTimeout(60_000);

it('the committed sdk/rest/types match the OpenAPI documents (run `npm run sdk:generate`)', async () => {
  const generated = await generateSdkTypes();
  const committed = await committedSdkTypes(generated.keys());
  const stale = [...generated].filter(([name, text]) => committed.get(name) !== text).map(([name]) => name);
  const extra = (await readdir(SDK_TYPES_DIR)).filter((name) => !generated.has(name));
  expect({ stale, extra }).toEqual({ stale: [], extra: [] });
});
