// @agentwire/schemas/validation: only the validator and its messages, without the TypeBox
// schemas, for code that must start fast (TypeBox takes a quarter of a second to load).
// Any new export added here becomes public API.
export {
  compileLinearPattern,
  type LinearPattern,
  MAX_PATTERN_COST,
  MAX_PATTERN_LENGTH,
  PatternError,
  patternCost,
  patternProblem,
} from './linear-pattern.js';
export { formatValidationErrors, jsonPath, jsonType } from './validation-messages.js';
export {
  compileValidator,
  createAjv,
  type Validate,
  type ValidationResult,
  type ValidatorOptions,
} from './validator.js';
