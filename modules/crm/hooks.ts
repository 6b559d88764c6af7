import type { BeforeHook } from '../../common/data-hooks';
import { problems } from '../../common/problems';

/**
 * The hooks of the crm module (manifest.json `hooks`), run by the data layer inside the record's
 * transaction (common/data-hooks.ts).
 */

/** Addresses compare case-insensitively in practice; one spelling is stored so filters with eq find them. */
export const normaliseEmail: BeforeHook = ({ data }) => {
  if (typeof data.email === 'string') return { email: data.email.toLowerCase() };
};

/** An age is a count of years: a negative one is a typing mistake, refused naming the field. */
export const refuseNegativeAge: BeforeHook = ({ data }) => {
  if (typeof data.age === 'number' && data.age < 0) {
    throw problems.validation([{ field: 'age', code: 'OUT_OF_RANGE', message: 'age may not be below 0' }], 'The contacts record is not valid');
  }
};
