// subscriptions/listen (2026-07-28), what both transports share: the filter a client sends, the
// kinds of notification this gateway agrees to (tools/list_changed only: it has no prompts or
// resources), the acknowledgement that comes first, and the subscription id each notification
// on the subscription carries. HTTP holds a subscription as an open POST answer
// (http/listen-streams.ts); stdio as a request that runs until the client cancels it.
import type { JsonRpcId, JsonRpcNotification } from '../protocol/json-rpc.js';

export const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

const FILTER_FIELDS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const;
export type Kind = (typeof FILTER_FIELDS)[number];
const HONORED: ReadonlySet<Kind> = new Set(['toolsListChanged']);

/** The filter a listen request asks for, or why it is not one. */
export function filterOf(value: unknown): Partial<Record<Kind, boolean>> | string {
  const shape =
    'subscriptions/listen needs params.notifications: an object with toolsListChanged, promptsListChanged, resourcesListChanged (true or false) and resourceSubscriptions (a list of URIs)';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return shape;
  const filter = value as Record<string, unknown>;
  for (const field of FILTER_FIELDS) {
    if (filter[field] !== undefined && typeof filter[field] !== 'boolean') {
      return `params.notifications.${field} must be true or false`;
    }
  }
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined && (!Array.isArray(uris) || uris.some((u) => typeof u !== 'string'))) {
    return 'params.notifications.resourceSubscriptions must be a list of URIs (strings)';
  }
  return filter as Partial<Record<Kind, boolean>>;
}

/** Of the kinds asked for, the ones this gateway sends. */
export function honoredKinds(asked: Partial<Record<Kind, boolean>>): ReadonlySet<Kind> {
  return new Set(FILTER_FIELDS.filter((k) => asked[k] === true && HONORED.has(k)));
}

/** The first message of a subscription: what the server agreed to send. */
export function acknowledgement(id: JsonRpcId, kinds: ReadonlySet<Kind>): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [SUBSCRIPTION_ID]: id }, notifications: Object.fromEntries([...kinds].map((k) => [k, true])) },
  };
}

/** A notification as it goes out on a subscription: tagged with the subscription's id. */
export function tagged(notification: JsonRpcNotification, id: JsonRpcId): JsonRpcNotification {
  const params = { ...(notification.params ?? {}) } as Record<string, unknown>;
  const meta = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
  return { ...notification, params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID]: id } } };
}
