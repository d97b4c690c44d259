// The error types of the envelope and the statuses they go with, as plain data (no TypeBox),
// so the client can share them without paying for TypeBox at start-up.
// Any new export added here becomes public API (also as @agentwire/schemas/error-types).
export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'conflict_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
] as const;

export type ErrorTypeName = (typeof ERROR_TYPES)[number];

/** The status code each error type is sent with. */
export const ERROR_STATUS: Readonly<Record<ErrorTypeName, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** The error type a status is reported with when nothing more specific is known. */
export function errorTypeForStatus(status: number): ErrorTypeName {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}
