export { type TalliedCounter, Tally } from './tally.js';
export { incomingContext, inSpan, otelApi, settleSpan, spanIds, type TraceMeta, traceMeta } from './trace-context.js';
export {
  type StartOptions,
  startTracing,
  type Tracing,
  TracingConfigError,
  type TracingSettings,
  tracingSettings,
} from './tracing.js';
