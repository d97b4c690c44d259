// The fault-injection admin endpoint. Off unless the API is started with admin enabled
// (TOY_API_ADMIN=1); needs the full key. Hidden from the OpenAPI document: it is for
// operators and tests, not for agents.
import { FAULT_ACTIONS, FaultConfig, FaultRule } from '@agentwire/schemas';
import Type from 'typebox';
import { type App, errorResponses, type RouteContext } from '../route-context.js';

const FaultState = Type.Object({
  seed: Type.Integer(),
  rules: Type.Array(Type.Intersect([FaultRule, Type.Object({ hits: Type.Integer(), remaining: Type.Integer() })])),
});

const count = Type.Integer({ minimum: 0 });
const StreamState = Type.Object({
  open: count,
  started: count,
  completed: count,
  client_left: count,
  cut: count,
  events_sent: count,
});

export function adminRoutes(context: RouteContext) {
  return async (app: App): Promise<void> => {
    const common = { config: { write: true, faults: false }, schema: { hide: true, tags: ['admin'] } } as const;

    app.get(
      '/admin/faults',
      { ...common, schema: { ...common.schema, response: { 200: FaultState, ...errorResponses(401, 403) } } },
      async () => context.faults.state(),
    );

    app.put(
      '/admin/faults',
      {
        ...common,
        schema: {
          ...common.schema,
          description: `Replaces the fault rules. Actions: ${FAULT_ACTIONS.join(', ')}.`,
          body: FaultConfig,
          response: { 200: FaultState, ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => context.faults.configure(request.body),
    );

    app.get(
      '/admin/streams',
      {
        ...common,
        schema: {
          ...common.schema,
          description: 'How the digest streams since start ended, and how many are open now.',
          response: { 200: StreamState, ...errorResponses(401, 403) },
        },
      },
      async () => {
        const s = context.streamStats;
        return {
          open: context.openStreams.size,
          started: s.started,
          completed: s.completed,
          client_left: s.clientLeft,
          cut: s.cut,
          events_sent: s.eventsSent,
        };
      },
    );

    app.delete(
      '/admin/faults',
      { ...common, schema: { ...common.schema, response: { 200: FaultState, ...errorResponses(401, 403) } } },
      async () => context.faults.clear(),
    );
  };
}
