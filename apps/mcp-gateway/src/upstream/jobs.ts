// Long operations as REST APIs do them: `202 Accepted` with a `Location` to poll (the
// asynchronous request-reply pattern). The status URL answers 202 or 200 with a status while the
// job runs, and when it is done either the result itself, a status that says so, or a redirect
// (303 See Other) to the result. These functions read those answers; upstream/caller.ts sends the
// requests and tools/tasks.ts keeps the task.
import type { IncomingHttpHeaders } from 'node:http';
import { serverRetryDelay } from '@agentwire/http-client';
import type { Accepted } from '../tools/tool.js';

/** Redirects followed from a status URL to the result (303 See Other, usually one). */
export const MAX_STATUS_REDIRECTS = 3;

// What status monitors call their states, lower case, `-`, `_` and spaces removed. A word not
// here is not guessed at: the task fails and says which word it was.
const WORKING = new Set([
  'accepted',
  'created',
  'inprogress',
  'notstarted',
  'pending',
  'processing',
  'queued',
  'running',
  'scheduled',
  'started',
  'waiting',
  'working',
]);
const DONE = new Set(['complete', 'completed', 'done', 'finished', 'ready', 'succeeded', 'success', 'successful']);
const FAILED = new Set(['error', 'errored', 'failed', 'failure']);
const CANCELLED = new Set(['aborted', 'canceled', 'cancelled']);

export type StatusWord = 'working' | 'done' | 'failed' | 'cancelled' | 'unknown';

/** The job the upstream accepted, when this answer is a 202 with a Location; undefined otherwise. */
export function acceptedOf(status: number, headers: IncomingHttpHeaders, baseUrl: string): Accepted | undefined {
  if (status !== 202) return undefined;
  const location = headers.location;
  if (typeof location !== 'string' || location === '') return undefined;
  let absolute: string;
  try {
    absolute = new URL(location, `${baseUrl}/`).href;
  } catch {
    return undefined;
  }
  return { location: absolute, retryAfterMs: serverRetryDelay(headers, Date.now()) };
}

// mutation testing: from here
/**
 * The path and query of a status URL under the upstream's base URL, or undefined when it is
 * elsewhere: the gateway sends the upstream's credentials to the upstream only.
 */
export function pathUnder(
  location: string,
  baseUrl: string,
): { path: string; query: Record<string, string[]> } | undefined {
  let url: URL;
  let base: URL;
  try {
    url = new URL(location);
    base = new URL(`${baseUrl.replace(/\/+$/, '')}/`);
  } catch {
    return undefined;
  }
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) return undefined;
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) query[name] = [...(query[name] ?? []), value];
  return { path: `/${url.pathname.slice(base.pathname.length)}`, query };
}
// mutation testing: to here

/**
 * What a status body says of its job: its `status` (or `state`, any case) word, `unknown` for a
 * word not known; or a long-running operation's `done: false|true` (Google's style).
 */
export function statusWordOf(body: unknown): { word: StatusWord; said: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  const field = Object.keys(b).find((k) => /^(status|state)$/i.test(k) && typeof b[k] === 'string');
  if (field === undefined) {
    if (b.done === false) return { word: 'working', said: 'not done' };
    if (b.done === true) return { word: b.error === undefined ? 'done' : 'failed', said: 'done' };
    return undefined;
  }
  // Shown in progress and in a task's statusMessage: a word, not whatever the upstream wrote.
  const said = (b[field] as string).slice(0, 100);
  const key = said.toLowerCase().replace(/[-_\s]/g, '');
  const word: StatusWord = WORKING.has(key)
    ? 'working'
    : DONE.has(key)
      ? 'done'
      : FAILED.has(key)
        ? 'failed'
        : CANCELLED.has(key)
          ? 'cancelled'
          : 'unknown';
  return { word, said };
}

/** A line on how the job goes: its status word, progress (a fraction or a percentage) and message. */
export function progressLine(body: unknown, said: string): string {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const raw = typeof b.progress === 'number' ? b.progress : typeof b.percent === 'number' ? b.percent / 100 : undefined;
  const fraction = raw === undefined ? undefined : raw > 1 ? raw / 100 : raw;
  const percent =
    fraction !== undefined && Number.isFinite(fraction)
      ? ` ${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`
      : '';
  const message = typeof b.message === 'string' ? `: ${b.message.slice(0, 200)}` : '';
  return `${said}${percent}${message}`;
}

/** What a failed job's status body says went wrong: its error message if it has one, else the body; 1,000 characters at most. */
export function failureText(body: unknown): string {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const error = b.error;
  const message =
    typeof error === 'string'
      ? error
      : typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
        ? (error as { message: string }).message
        : typeof b.message === 'string'
          ? b.message
          : JSON.stringify(body);
  return message.slice(0, 1000);
}
