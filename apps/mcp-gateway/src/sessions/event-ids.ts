// The ids of a session's GET stream events: `<epoch>-<n>`. A client resumes with the last id it
// saw (Last-Event-ID) and the stream sends what came after, so an id must never be given twice.
// A counter in Redis alone can be: a crash with `appendfsync everysec` loses up to the last
// second of writes, the counter comes back lower than ids clients already hold, and a resuming
// client would take new events for ones it had seen. So each id carries an epoch: the time
// (Redis's clock, in ms) the backend's current run began writing the session's events. A
// restart or a failover is a new run (Redis's run_id changes), so a new, later epoch, and n
// counts from 1 again in it. Ids compare by epoch, then n; within an epoch they are consecutive,
// which is how a stream notices one it did not hear.

export interface EventId {
  epoch: number;
  n: number;
}

const ID = /^(\d{1,15})-(\d{1,15})$/;

/** The id's parts, or undefined for anything that is not an event id. */
export function parseEventId(id: string): EventId | undefined {
  const match = ID.exec(id);
  return match ? { epoch: Number(match[1]), n: Number(match[2]) } : undefined;
}

export function formatEventId(id: EventId): string {
  return `${id.epoch}-${id.n}`;
}

/** Negative when a came before b, positive after, 0 for the same id. */
export function compareEventIds(a: EventId, b: EventId): number {
  return a.epoch === b.epoch ? a.n - b.n : a.epoch - b.epoch;
}

/** Whether `next` is the id right after `last`: the next in its epoch, or the first of a later one. */
export function isNextEventId(next: EventId, last: EventId): boolean {
  return next.epoch === last.epoch ? next.n === last.n + 1 : next.epoch > last.epoch && next.n === 1;
}

/** The events after `lastEventId`, in id order; none for an id that is not one of ours. */
export function eventsAfterId<T extends { id: string }>(events: readonly T[], lastEventId: string): T[] {
  const last = parseEventId(lastEventId);
  if (last === undefined) return [];
  return events.filter((e) => {
    const id = parseEventId(e.id);
    return id !== undefined && compareEventIds(id, last) > 0;
  });
}
