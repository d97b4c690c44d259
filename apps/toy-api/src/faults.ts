// Fault injection: rules such as "the next 2 GET /emails get 503" or "cut the next digest
// stream after 3 events", set through the admin endpoint. Probabilities are drawn from a
// seeded generator, so a run with the same seed and the same requests fails the same way.
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultConfig, FaultRule } from '@agentwire/schemas';
import { errorTypeForStatus } from '@agentwire/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { seededRandom } from './data/prng.js';
import { EnvelopeError } from './envelope-error.js';

type Action = FaultRule['action'];

interface ActiveRule {
  rule: FaultRule;
  seen: number;
  hits: number;
}

export interface FaultState {
  seed: number;
  rules: Array<FaultRule & { hits: number; remaining: number }>;
}

/** Route templates come from Fastify as `/emails/:id`; rules may use either that or `{id}`. */
function openApiPath(routePath: string): string {
  return routePath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

interface FaultableRoute {
  method: string;
  template: string;
  pattern: RegExp;
  streams: boolean;
}

export class FaultInjector {
  /** Told of every fault injected (for /metrics). */
  onHit: ((action: Action) => void) | undefined;

  #rules: ActiveRule[] = [];
  #seed = 1;
  #random = seededRandom(1);
  readonly #routes: FaultableRoute[] = [];

  /** Registers a route rules may target (called as routes are added). */
  addRoute(method: string, fastifyPath: string, streams: boolean): void {
    const template = openApiPath(fastifyPath);
    const pattern = new RegExp(`^${fastifyPath.replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`);
    this.#routes.push({ method, template, pattern, streams });
  }

  /** Rejects rules that could never fire, saying which rule and what would. */
  #check(rules: readonly FaultRule[]): void {
    rules.forEach((rule, i) => {
      const matching = this.#routes.filter(
        (r) =>
          (rule.method === undefined || rule.method === r.method) &&
          (rule.path === r.template || r.pattern.test(rule.path)),
      );
      if (matching.length === 0) {
        const known = [...new Set(this.#routes.map((r) => `${r.method} ${r.template}`))].join(', ');
        throw new EnvelopeError(
          'invalid_request_error',
          `$.rules[${i}]: no route matches ${rule.method ?? 'any method'} ${rule.path}; faults apply to: ${known}`,
        );
      }
      if (rule.statuses !== undefined) {
        const total = Object.values(rule.statuses).reduce((sum, w) => sum + w, 0);
        if (rule.action !== 'status' || rule.status !== undefined) {
          throw new EnvelopeError(
            'invalid_request_error',
            `$.rules[${i}].statuses: weighted statuses go with action status and no status of its own`,
          );
        }
        if (total > 1 + 1e-9) {
          throw new EnvelopeError(
            'invalid_request_error',
            `$.rules[${i}].statuses: the weights add up to ${Math.round(total * 1000) / 1000}; at most 1 (the rest of the requests pass)`,
          );
        }
      }
      if (rule.action === 'cut_stream' && !matching.some((r) => r.streams)) {
        const streaming = this.#routes.filter((r) => r.streams).map((r) => `${r.method} ${r.template}`);
        throw new EnvelopeError(
          'invalid_request_error',
          `$.rules[${i}]: cut_stream needs a route that streams (${streaming.join(', ')}), not ${rule.path}`,
        );
      }
    });
  }

  configure(config: FaultConfig): FaultState {
    this.#check(config.rules);
    this.#seed = config.seed ?? 1;
    this.#random = seededRandom(this.#seed);
    this.#rules = config.rules.map((rule) => ({ rule, seen: 0, hits: 0 }));
    return this.state();
  }

  clear(): FaultState {
    return this.configure({ rules: [] });
  }

  state(): FaultState {
    return {
      seed: this.#seed,
      rules: this.#rules.map(({ rule, hits }) => ({ ...rule, hits, remaining: Math.max(0, (rule.times ?? 1) - hits) })),
    };
  }

  /** Whether any rule is set: without one, the hooks on every route return at once. */
  get armed(): boolean {
    return this.#rules.length > 0;
  }

  /** The first live rule for this request whose action is one of `actions`, counted as a hit. */
  take(request: FastifyRequest, actions: readonly Action[]): FaultRule | undefined {
    if (this.#rules.length === 0) return undefined;
    const path = request.url.split('?')[0] ?? '';
    const template = request.routeOptions.url ? openApiPath(request.routeOptions.url) : undefined;
    for (const active of this.#rules) {
      const { rule } = active;
      if (!actions.includes(rule.action)) continue;
      if (rule.method && rule.method !== request.method) continue;
      if (rule.path !== path && rule.path !== template && rule.path !== request.routeOptions.url) continue;
      if (active.hits >= (rule.times ?? 1)) continue;
      active.seen++;
      if (active.seen <= (rule.skip ?? 0)) continue;
      if (rule.probability !== undefined && this.#random() >= rule.probability) continue;
      let taken = rule;
      if (rule.statuses !== undefined) {
        const status = weightedStatus(rule.statuses, this.#random());
        if (status === undefined) continue;
        taken = { ...rule, status };
      }
      active.hits++;
      this.onHit?.(rule.action);
      return taken;
    }
    return undefined;
  }

  /** preHandler: errors, delays, broken connections and hangs, before the route does any work. */
  async beforeHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const rule = this.take(request, ['status', 'delay', 'reset', 'hang', 'empty_reply', 'malformed_chunk']);
    if (!rule) return;
    request.log.info({ fault: rule.action, path: rule.path }, 'injecting fault');
    switch (rule.action) {
      case 'status': {
        const status = rule.status ?? 503;
        const headers: Record<string, string> =
          rule.retry_after_s !== undefined ? { 'retry-after': String(rule.retry_after_s) } : {};
        if (rule.rate_limit_reset_s !== undefined) {
          headers['x-ratelimit-remaining'] = '0';
          headers['x-ratelimit-reset'] = String(Math.ceil(Date.now() / 1000) + rule.rate_limit_reset_s);
        }
        throw new EnvelopeError(
          // A rule that says when a rate limit resets is a rate limit, whatever its status (GitHub's is a 403).
          rule.error_type ?? (rule.rate_limit_reset_s !== undefined ? 'rate_limit_error' : errorTypeForStatus(status)),
          rule.message ?? `injected fault: HTTP ${status}`,
          {
            status,
            headers,
          },
        );
      }
      case 'delay': {
        // The jitter is drawn only for a rule that has one, so a seed replays older rules as before.
        const ms = (rule.delay_ms ?? 1000) + (rule.jitter_ms ? Math.round(this.#random() * rule.jitter_ms) : 0);
        reply.header('server-timing', `fault;dur=${ms};desc="injected delay"`);
        await sleepUnlessGone(request, ms);
        return;
      }
      case 'reset':
        reply.hijack();
        request.raw.socket.resetAndDestroy();
        return;
      case 'empty_reply':
        // The connection closes in order (FIN, not RST), and not one byte of an answer came.
        reply.hijack();
        request.raw.socket.end();
        return;
      case 'malformed_chunk':
        reply.hijack();
        request.raw.socket.end(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
        );
        return;
      case 'hang': {
        reply.hijack();
        // Hang until the client gives up, or (bounded) the rule's delay_ms, default 5 minutes.
        const socket = request.raw.socket;
        const timer = setTimeout(() => socket.destroy(), rule.delay_ms ?? 300_000);
        socket.once('close', () => clearTimeout(timer));
        return;
      }
      default:
        return;
    }
  }

  /** onSend: a body cut off half way, or sent slowly, with the full Content-Length promised. */
  onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const rule = this.take(request, ['truncate', 'drip']);
    if (!rule) return payload;
    const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
    reply.header('content-length', String(bytes.length));
    if (rule.action === 'drip') return drip(reply, bytes, rule.chunk_bytes ?? 16, rule.delay_ms ?? 200);
    const half = bytes.subarray(0, Math.floor(bytes.length / 2));
    const stream = new Readable({ read() {} });
    stream.push(half);
    setImmediate(() => stream.destroy(new Error('injected fault: truncated body')));
    return stream;
  }
}

/**
 * The status whose share of [0, 1) holds `draw`, the statuses taken in ascending order (as
 * JavaScript orders integer-like keys); undefined past their sum.
 */
function weightedStatus(statuses: Record<string, number>, draw: number): number | undefined {
  let upTo = 0;
  for (const [status, weight] of Object.entries(statuses)) {
    upTo += weight;
    if (draw < upTo) return Number(status);
  }
  return undefined;
}

/** The body `size` bytes at a time, `everyMs` apart; the timer stops when the client goes. */
function drip(reply: FastifyReply, bytes: Buffer, size: number, everyMs: number): Readable {
  reply.header('server-timing', `fault;desc="drip ${size} bytes every ${everyMs} ms"`);
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const stream = new Readable({
    read() {
      if (timer !== undefined) return;
      timer = setTimeout(
        () => {
          timer = undefined;
          const piece = bytes.subarray(sent, sent + size);
          sent += piece.length;
          stream.push(piece);
          if (sent >= bytes.length) stream.push(null);
        },
        sent === 0 ? 0 : everyMs,
      );
    },
    destroy(error, done) {
      clearTimeout(timer);
      done(error);
    },
  });
  return stream;
}

async function sleepUnlessGone(request: FastifyRequest, ms: number): Promise<void> {
  // Gone already (its close fired before we listened): no wait at all.
  if (request.raw.socket.destroyed) return;
  const controller = new AbortController();
  const onClose = () => controller.abort();
  request.raw.socket.once('close', onClose);
  try {
    await sleep(ms, undefined, { signal: controller.signal });
  } catch {
    // The client went away; nothing will be sent.
  } finally {
    request.raw.socket.off('close', onClose);
  }
}
