// What the OTEL_* variables turn on, and the clear errors for values tracing cannot work with.
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { startTracing, TracingConfigError, tracingSettings } from '../src/index.js';

describe('tracingSettings', () => {
  it('is off with no endpoint, when disabled, and with the none exporter', () => {
    expect(tracingSettings({}, 'svc')).toEqual({
      on: false,
      reason: 'no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, 'svc').on).toBe(false);
    const endpoint = 'http://collector:4318';
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'true' }, 'svc').on).toBe(false);
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }, 'svc').on).toBe(
      false,
    );
  });

  it('sends to /v1/traces below the base endpoint, or to the traces endpoint as given', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'svc')).toEqual({
      on: true,
      serviceName: 'svc',
      sampler: 'parentbased_always_on',
      ratio: 1,
      endpoint: 'http://collector:4318/v1/traces',
      batch: {},
    });
    expect(
      tracingSettings(
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_QUEUE_SIZE: '4096' },
        'svc',
      ),
    ).toMatchObject({ batch: { scheduledDelayMillis: 200, maxQueueSize: 4096 } });
    const traces = tracingSettings(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x.example/otlp/traces', OTEL_SERVICE_NAME: 'mine' },
      'svc',
    );
    expect(traces).toMatchObject({ endpoint: 'https://x.example/otlp/traces', serviceName: 'mine' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }, 'svc')).toMatchObject({
      endpoint: 'http://localhost:4318/v1/traces',
    });
    expect(
      tracingSettings(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_TRACES_SAMPLER: 'traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.25',
        },
        'svc',
      ),
    ).toMatchObject({ sampler: 'traceidratio', ratio: 0.25 });
  });

  it('names the variable, the value and what is allowed when it cannot work', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [
        { ...base, OTEL_TRACES_EXPORTER: 'console' },
        /OTEL_TRACES_EXPORTER=console is not supported: use otlp .* or none/,
      ],
      [
        { ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: .*http\/json/,
      ],
      [
        { ...base, OTEL_TRACES_SAMPLER: 'sometimes' },
        /OTEL_TRACES_SAMPLER=sometimes is not supported: use one of always_on,/,
      ],
      [
        { ...base, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' },
        /OTEL_TRACES_SAMPLER_ARG=2 must be a ratio from 0 to 1/,
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
        /'collector:4318\/v1\/traces' is not an http:\/\/ or https:\/\/ URL/,
      ],
    ];
    for (const [env, message] of cases) {
      expect(() => tracingSettings(env, 'svc')).toThrow(TracingConfigError);
      expect(() => tracingSettings(env, 'svc')).toThrow(message);
    }
  });
});

describe('startTracing', () => {
  it('returns nothing and registers nothing when the environment leaves tracing off', async () => {
    expect(await startTracing({ serviceName: 'svc', env: {} })).toBeUndefined();
    // The global tracer is still the API's no-op one: a span made through it records nothing.
    expect(trace.getTracer('t').startSpan('x').isRecording()).toBe(false);
  });

  it('refuses a bad value at start, before anything is registered', async () => {
    await expect(
      startTracing({
        serviceName: 'svc',
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'zipkin' },
      }),
    ).rejects.toThrow(/OTEL_TRACES_EXPORTER=zipkin/);
  });
});
