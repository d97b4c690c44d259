// The gateway's Prometheus metrics (prom-client), one registry per gateway. Every label has a
// bounded set of values: tool names come from the served list (a name a caller made up counts
// as 'unknown'), outcomes and status classes are fixed words, upstreams are the configured ones.
import { createRequire } from 'node:module';
import type { UpstreamReport } from '@agentwire/schemas/upstream-report';
import { Tally } from '@agentwire/telemetry';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallOutcome } from '../tools/call-answers.js';
import type { ToolCallObserver } from '../tools/tool-calls.js';

/** What one upstream attempt ended as: its status class, or `network` when no status came. */
function statusClass(status: number | null | undefined): string {
  if (status === null || status === undefined) return 'network';
  return STATUS_CLASSES[Math.floor(status / 100) - 1] ?? `${Math.floor(status / 100)}xx`;
}
// Made once: a template string per attempt is a new string to hash as a key.
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

// prom-client takes about 60 ms to load, a fifth of the gateway's start-up over stdio: it is
// loaded when the metrics are first used (the first tool call or scrape), as undici is with the
// first request, so a client's initialize does not wait for it.
const require = createRequire(import.meta.url);

/** The metrics themselves, made on first use. */
interface Made {
  registry: Registry;
  toolCalls: Counter<'tool' | 'outcome'>;
  duration: Histogram<'tool'>;
  attempts: Counter<'upstream' | 'status_class'>;
  retries: Counter<'upstream'>;
  Gauge: typeof Gauge;
}

export class GatewayMetrics implements ToolCallObserver {
  #made: Made | undefined;
  /** Gauges declared before the metrics were made, added when they are (by name: the newer wins). */
  readonly #gauges = new Map<string, (made: Made) => void>();
  readonly #onScrape: Array<() => void> = [];
  // Counted here, handed to prom-client when scraped (Tally, in @agentwire/telemetry).
  readonly #calls = new Tally(['tool', 'outcome'] as const);
  readonly #attempts = new Tally(['upstream', 'status_class'] as const);

  #make(): Made {
    if (this.#made) return this.#made;
    const prom = require('prom-client') as typeof import('prom-client');
    const registry = new prom.Registry();
    const registers = [registry];
    const calls = this.#calls;
    const attempts = this.#attempts;
    this.#made = {
      registry,
      Gauge: prom.Gauge,
      toolCalls: new prom.Counter({
        name: 'mcp_gateway_tool_calls_total',
        help: 'Tool calls by tool and outcome (ok, error, invalid_arguments, unknown_tool, cancelled, refused, rate_limited).',
        labelNames: ['tool', 'outcome'],
        registers,
        collect() {
          calls.into(this);
        },
      }),
      duration: new prom.Histogram({
        name: 'mcp_gateway_tool_call_duration_seconds',
        help: 'Time from a tool call arriving to its answer, retries and waits included.',
        labelNames: ['tool'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers,
      }),
      attempts: new prom.Counter({
        name: 'mcp_gateway_upstream_attempts_total',
        help: 'HTTP attempts to upstreams, by status class (network: no status came back).',
        labelNames: ['upstream', 'status_class'],
        registers,
        collect() {
          attempts.into(this);
        },
      }),
      retries: new prom.Counter({
        name: 'mcp_gateway_upstream_retries_total',
        help: 'Upstream attempts that were retries of a failed one.',
        labelNames: ['upstream'],
        registers,
      }),
    };
    for (const add of this.#gauges.values()) add(this.#made);
    return this.#made;
  }

  /** Declares a gauge: made with the metrics (now, if they are made already). */
  #declare(name: string, add: (made: Made) => void): void {
    this.#gauges.set(name, add);
    if (!this.#made) return;
    this.#made.registry.removeSingleMetric(name);
    add(this.#made);
  }

  /** A tool call's outcome, its duration and the upstream attempts behind it (from its report). */
  toolCall(
    tool: string,
    outcome: CallOutcome,
    seconds: number,
    upstream?: { name: string | undefined; report: UpstreamReport },
  ): void {
    const made = this.#make();
    this.#calls.add([tool, outcome]);
    made.duration.observe({ tool }, seconds);
    if (!upstream) return;
    const name = upstream.name ?? 'default';
    for (const attempt of upstream.report.attemptLog) this.#attempts.add([name, statusClass(attempt.status)]);
    if (upstream.report.retries > 0) made.retries.inc({ upstream: name }, upstream.report.retries);
  }

  /** A gauge whose value is read when Prometheus scrapes. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    // A second server on the same gateway (tests) reads its own state: the newer reader wins.
    this.#declare(name, (made) => {
      new made.Gauge({
        name,
        help,
        registers: [made.registry],
        async collect() {
          this.set(await read());
        },
      });
    });
  }

  /** A gauge with one series per label value, read at scrape time. */
  gaugeBy(name: string, help: string, label: string, read: () => Array<[string, number]>): void {
    this.#declare(name, (made) => {
      new made.Gauge({
        name,
        help,
        labelNames: [label],
        registers: [made.registry],
        collect() {
          this.reset();
          for (const [value, n] of read()) this.set({ [label]: value }, n);
        },
      });
    });
  }

  /** Runs `read` at the start of each scrape: for gauges that should read one snapshot. */
  onScrape(read: () => void): void {
    this.#onScrape.push(read);
  }

  text(): Promise<string> {
    for (const read of this.#onScrape) read();
    return this.#make().registry.metrics();
  }

  get contentType(): string {
    return this.#make().registry.contentType;
  }
}
