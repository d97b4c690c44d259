// The one error envelope every agentwire HTTP service answers with.
// Clients branch on `type`; `message` is for people and models.
import Type, { type Static } from 'typebox';

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

export const ErrorType = Type.Enum(ERROR_TYPES);
export type ErrorType = Static<typeof ErrorType>;

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        type: ErrorType,
        message: Type.String(),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** The status code each error type is sent with (409 and 422 share their types with 4xx cousins). */
export const ERROR_STATUS: Readonly<Record<ErrorType, number>> = {
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
