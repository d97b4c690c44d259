// What route modules share: the store, the fault injector, and typed access to the caller.

import { ErrorEnvelope } from '@agentwire/schemas';
import type { SSEReplyInterface } from '@fastify/sse';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { FaultInjector } from './faults.js';
import type { StateStore } from './store/state-store.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface RouteContext {
  store: StateStore;
  faults: FaultInjector;
  limited: { max: number; windowMs: number };
  slowTimers: Set<NodeJS.Timeout>;
  /** /slow calls whose client went away before the wait was over (their timer stopped). */
  slowEndedEarly: { count: number };
  /** The digest streams still running. */
  openStreams: Set<SSEReplyInterface>;
  /** How the digest streams since start ended (GET /admin/streams). */
  streamStats: StreamStats;
}

export interface StreamStats {
  started: number;
  /** Sent every event. */
  completed: number;
  /** Stopped because the client went away first: the work it no longer wanted was not done. */
  clientLeft: number;
  /** Cut on purpose (a fault rule or cut_after). */
  cut: number;
  eventsSent: number;
}

/** The error responses a route can give, for its OpenAPI entry; any route may answer 500 or 503. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorEnvelope> {
  return Object.fromEntries([...statuses, 500, 503].map((s) => [s, ErrorEnvelope]));
}
