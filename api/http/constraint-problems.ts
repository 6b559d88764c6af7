import { CheckIntegrityConstraintViolationError, InvalidInputError, UniqueIntegrityConstraintViolationError } from 'slonik';
import { problems, type Problem } from '../../common/problems';

/**
 * The one place where database constraint names become problems (the Logto pattern): a handler
 * lets the violation through and the caller gets the documented answer, not a 500.
 */
const uniqueViolations: Record<string, () => Problem> = {
  users_email_lower: () => problems.conflict('An account with this e-mail address already exists'),
  user_identities_provider_subject: () => problems.providerAlreadyLinked('provider'),
  user_identities_user_provider: () => problems.conflict('The account already has a link to this provider; unlink it first'),
  roles_tenant_name: () => problems.conflict('A role with this name already exists in the tenant'),
  wallets_user_currency_label: () => problems.conflict('The user already has a wallet with this currency and label'),
};

/** A module's permission keys refused by the registry (migration 0010; docs/reference/access.md#rule-2): 400. */
const modulePermissionRefused = (message: string) => () => problems.validation(
  [{ field: 'permissions', message, code: 'INVALID_VALUE' }], 'The module\'s permissions cannot be registered',
);

const checkViolations: Record<string, () => Problem> = {
  permissions_module_prefix: modulePermissionRefused('Module permission keys must start with the module slug; system. and platform. are reserved'),
  permissions_module_not_system: modulePermissionRefused('The module slug is the prefix of system permissions, which modules cannot register'),
};

/**
 * A request value the guard let through that PostgreSQL cannot read as its column's type: a uuid in
 * a form joi takes and the cast refuses (`(…)`, `:`-separated), a date out of range. The schemas
 * refuse these first (api/http/ids.ts); this keeps one they miss a 400 for the caller, not a 500.
 */
const dataExceptions: Record<string, string> = {
  // slonik reports it as InvalidInputError (below); the pipelined reads (db/tenant-reads.ts) as pg's error.
  '22P02': 'A value is not in the form its field takes', // invalid_text_representation
  '22007': 'A date or time is not valid', // invalid_datetime_format
  '22008': 'A date or time is out of range', // datetime_field_overflow
};

function dataExceptionOf(error: unknown): Problem | null {
  // slonik turns 22P02 (invalid_text_representation) into its own error without the code.
  if (error instanceof InvalidInputError) return problems.validation([], 'A value is not in the form its field takes');
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? dataExceptions[code] : undefined;
  return detail ? problems.validation([], detail) : null;
}

export function constraintProblemOf(error: unknown): Problem | null {
  const data = dataExceptionOf(error);
  if (data) return data;
  if (error instanceof UniqueIntegrityConstraintViolationError && error.constraint) {
    return uniqueViolations[error.constraint]?.() ?? null;
  }
  if (error instanceof CheckIntegrityConstraintViolationError && error.constraint) {
    return checkViolations[error.constraint]?.() ?? null;
  }
  return null;
}
