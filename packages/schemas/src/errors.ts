// The one error envelope every agentwire HTTP service answers with.
// Clients branch on `type`; `message` is for people and models.
import Type, { type Static } from 'typebox';

import { ERROR_TYPES } from './error-types.js';

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
