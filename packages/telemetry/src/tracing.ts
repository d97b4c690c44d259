// Tracing for one process: off unless the standard OTEL_* variables say where spans go, and then
// OTLP over HTTP (JSON) from the official SDK, W3C trace context, and an AsyncLocalStorage
// context so that a span started inside another becomes its child. Nothing of the SDK is loaded
// while tracing is off: a process without OTEL_* pays for none of it.
import type { DiagLogger, Tracer, TracerProvider } from '@opentelemetry/api';
import type { Sampler, SpanProcessor } from '@opentelemetry/sdk-trace';
import { PooledIdGenerator } from './ids.js';

/** Tracing as a process has it: a tracer per component, and the way to send what is left. */
export interface Tracing {
  /** The provider, for libraries that take one (the Fastify instrumentation). */
  provider: TracerProvider;
  /** A tracer for one component (`agentwire.gateway`, ...): the scope on each of its spans. */
  tracer(scope: string): Tracer;
  /** Sends the spans still buffered. */
  flush(): Promise<void>;
  /** Sends what is buffered, then stops tracing in this process. */
  shutdown(): Promise<void>;
}

/** A value of OTEL_* that tracing cannot work with: what it was and what is allowed. */
export class TracingConfigError extends Error {
  override readonly name = 'TracingConfigError';
}

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
type SamplerName = (typeof SAMPLERS)[number];

/** What the environment asks for; `on: false` says why tracing is off. */
export type TracingSettings =
  | { on: false; reason: string }
  | {
      on: true;
      serviceName: string;
      sampler: SamplerName;
      ratio: number;
      endpoint: string;
      /** The batch processor's settings given by OTEL_BSP_* (the SDK's defaults otherwise). */
      batch: BatchSettings;
    };

const BATCH_VARIABLES = {
  OTEL_BSP_SCHEDULE_DELAY: 'scheduledDelayMillis',
  OTEL_BSP_EXPORT_TIMEOUT: 'exportTimeoutMillis',
  OTEL_BSP_MAX_QUEUE_SIZE: 'maxQueueSize',
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'maxExportBatchSize',
} as const;
type BatchSettings = Partial<Record<(typeof BATCH_VARIABLES)[keyof typeof BATCH_VARIABLES], number>>;

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/**
 * Reads the standard variables: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER (otlp or none),
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL
 * (http/json), OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_* (the batches) and OTEL_SERVICE_NAME. Tracing is on when an endpoint
 * is set or OTEL_TRACES_EXPORTER=otlp (then the collector's default, localhost:4318).
 */
export function tracingSettings(env: NodeJS.ProcessEnv, defaultServiceName: string): TracingSettings {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { on: false, reason: 'OTEL_SDK_DISABLED=true' };
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return { on: false, reason: 'OTEL_TRACES_EXPORTER=none' };
  if (set(exporter) && exporter !== 'otlp') {
    throw new TracingConfigError(
      `OTEL_TRACES_EXPORTER=${exporter} is not supported: use otlp (OTLP over HTTP) or none (the console ` +
        'exporter would write into the stdio transport)',
    );
  }
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const baseEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!set(tracesEndpoint) && !set(baseEndpoint) && exporter !== 'otlp') {
    return { on: false, reason: 'no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' };
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const) {
    const protocol = env[name]?.trim();
    if (set(protocol) && protocol !== 'http/json') {
      throw new TracingConfigError(
        `${name}=${protocol} is not supported: spans are sent as http/json (OTLP over HTTP)`,
      );
    }
  }
  const endpoint = set(tracesEndpoint)
    ? tracesEndpoint.trim()
    : `${(set(baseEndpoint) ? baseEndpoint.trim() : 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  try {
    const url = new URL(endpoint);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new TracingConfigError(`the OTLP traces endpoint '${endpoint}' is not an http:// or https:// URL`);
  }
  const sampler = (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(sampler)) {
    throw new TracingConfigError(`OTEL_TRACES_SAMPLER=${sampler} is not supported: use one of ${SAMPLERS.join(', ')}`);
  }
  let ratio = 1;
  if (sampler.endsWith('traceidratio') && set(env.OTEL_TRACES_SAMPLER_ARG)) {
    ratio = Number(env.OTEL_TRACES_SAMPLER_ARG);
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new TracingConfigError(
        `OTEL_TRACES_SAMPLER_ARG=${env.OTEL_TRACES_SAMPLER_ARG} must be a ratio from 0 to 1 for ${sampler}`,
      );
    }
  }
  const batch: BatchSettings = {};
  for (const [name, option] of Object.entries(BATCH_VARIABLES)) {
    const text = env[name];
    if (!set(text)) continue;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) {
      throw new TracingConfigError(`${name}=${text} must be a whole number of at least 1`);
    }
    batch[option] = value;
  }
  const serviceName = set(env.OTEL_SERVICE_NAME) ? env.OTEL_SERVICE_NAME.trim() : defaultServiceName;
  return { on: true, serviceName, sampler, ratio, endpoint, batch };
}

export interface StartOptions {
  /** service.name when OTEL_SERVICE_NAME does not say. */
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Where spans go instead of OTLP: a test's in-memory exporter, say. With these, tracing is
   * on whatever the environment says.
   */
  spanProcessors?: SpanProcessor[];
  /**
   * Keep the active span in AsyncLocalStorage (default true), so spans started anywhere below
   * become its children. A server that hands each span's context on explicitly (the gateway, the
   * API) sets false, and tracing then touches no request's async state.
   */
  activeContext?: boolean;
}

/** Warnings of the SDK (an export that failed) on stderr, never on stdout (stdio is MCP's). */
const stderrLogger: DiagLogger = {
  error: (message, ...args) => process.stderr.write(`[otel] error: ${message} ${args.map(String).join(' ')}\n`),
  warn: (message, ...args) => process.stderr.write(`[otel] warning: ${message} ${args.map(String).join(' ')}\n`),
  info: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
};

/**
 * Starts tracing for this process, or returns undefined when the environment leaves it off.
 * Registers the provider, the W3C propagator and the context manager globally (one per
 * process: a second start replaces the first).
 */
export async function startTracing(options: StartOptions): Promise<Tracing | undefined> {
  const env = options.env ?? process.env;
  const settings: TracingSettings = options.spanProcessors
    ? { on: true, serviceName: options.serviceName, sampler: 'always_on', ratio: 1, endpoint: '', batch: {} }
    : tracingSettings(env, options.serviceName);
  if (!settings.on) return undefined;
  // The API too (about 30 ms to load): a process that does not trace never loads it.
  const [
    { context, DiagLogLevel, diag, propagation, trace },
    sdk,
    { W3CTraceContextPropagator },
    { AsyncLocalStorageContextManager },
    resources,
  ] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/core'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
  ]);
  let processors = options.spanProcessors;
  if (!processors) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processors = [
      new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.endpoint }), ...settings.batch }),
    ];
  }
  const sampler = makeSampler(sdk, settings.sampler, settings.ratio);
  const resource = resources
    .resourceFromAttributes({ 'service.name': settings.serviceName })
    .merge(resources.detectResources({ detectors: [resources.resourceAttributesEnvDetector] }));
  const provider = new sdk.TracerProvider({
    resource,
    sampler,
    spanProcessors: processors,
    idGenerator: new PooledIdGenerator(),
  });
  trace.disable();
  context.disable();
  propagation.disable();
  diag.setLogger(stderrLogger, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  trace.setGlobalTracerProvider(provider as TracerProvider);
  if (options.activeContext !== false) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    provider: provider as TracerProvider,
    tracer: (scope) => provider.getTracer(scope),
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

function makeSampler(sdk: typeof import('@opentelemetry/sdk-trace'), name: SamplerName, ratio: number): Sampler {
  const root =
    name.endsWith('always_off') || (name.endsWith('traceidratio') && ratio === 0)
      ? new sdk.AlwaysOffSampler()
      : name.endsWith('traceidratio')
        ? new sdk.TraceIdRatioBasedSampler(ratio)
        : new sdk.AlwaysOnSampler();
  return name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root;
}
