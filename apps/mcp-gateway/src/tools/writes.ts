// Writes that are safe to repeat, for any upstream. A caller names a write by a key in
// `_meta["agentwire.dev/idempotencyKey"]` and sends the same key when it re-issues a call whose
// answer it lost (MCP 2026-07-28 tells a client to re-issue a call whose stream broke).
//
// Who dedupes: an upstream that takes an Idempotency-Key (its operation declares the header, or
// the config says so) gets one made of the caller, the tool and the key, and dedupes itself;
// for any other upstream the gateway does (write-store.ts): the first call with a key leases it
// and runs once, a repeat with the same arguments gets the stored result marked as a replay, with
// other arguments an error, while the first still runs "in progress, retry after N ms". A key is
// the caller's and the tool's only: another caller's same key is another write.
import { createHash, randomUUID } from 'node:crypto';
import { UPSTREAM_REPORT_KEY } from '@agentwire/schemas/upstream-report-key';
import { INVALID_PARAMS, RpcError } from '../protocol/json-rpc.js';
import type { Caller } from '../protocol/messages.js';
import type { Tool, ToolResult } from './tool.js';
import type { WriteLease, WriteStore } from './write-store.js';

/** Where a caller puts a write's key in a tools/call's `_meta`. */
export const IDEMPOTENCY_KEY_META = 'agentwire.dev/idempotencyKey';
/** Where a result says what happened to a write: `{ key?, by?, replayed?, outcome? }`. */
export const WRITE_META = 'agentwire.dev/write';

export const DEFAULT_WRITE_TTL_MS = 86_400_000;
export const DEFAULT_MAX_WRITES_PER_CALLER = 10_000;
/** The most bytes of one stored result (JSON); a larger one is kept as a note that it ended. */
export const DEFAULT_MAX_WRITE_RESULT_BYTES = 262_144;
/** How long a lease outlives the call's deadline: past it, the first call surely ended. */
const LEASE_MARGIN_MS = 5000;

export interface WriteOptions {
  store: WriteStore;
  /** IDEMPOTENCY_TTL_MS: how long a key is kept after its first use. */
  ttlMs: number;
  /** IDEMPOTENCY_MAX_KEYS_PER_CALLER: the most live keys one caller holds. */
  maxPerCaller: number;
  /** IDEMPOTENCY_MAX_RESULT_BYTES: the most bytes of one stored result. */
  maxResultBytes: number;
}

/** What the tool layer does with a call's key. */
export type WritePlan =
  /** No key, or a read: nothing to do. */
  | { by: 'none' }
  /** The upstream dedupes: send it this Idempotency-Key. */
  | { by: 'upstream'; key: string; upstreamKey: string }
  /** The gateway dedupes: the lease to finish or abandon. */
  | { by: 'gateway'; key: string; lease: WriteLease };

/** Why a keyed call does not run: its answer instead (write.ts's caller turns it into a refusal). */
export interface WriteRefusal {
  reason: 'mismatch' | 'in_progress' | 'unknown' | 'too_many_keys';
  text: string;
  retryAfterMs?: number | undefined;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/** A keyed call that does not go upstream: a stored result to replay, or a refusal. */
type Begun = { replay: Record<string, unknown> } | { refusal: WriteRefusal };
/** The plan of a read or of a call without a key (shared: nothing ever changes a plan). */
const NOTHING_TO_DO: WritePlan = Object.freeze({ by: 'none' });

/** The key in a tools/call's `_meta`, checked; undefined without one. */
export function keyOf(meta: Record<string, unknown>): string | undefined {
  const key = meta[IDEMPOTENCY_KEY_META];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw new RpcError(
      INVALID_PARAMS,
      `_meta["${IDEMPOTENCY_KEY_META}"] must be 1 to 255 visible ASCII characters (no spaces), one per logical write; a UUID is a good choice`,
    );
  }
  return key;
}

export class Writes {
  readonly #options: WriteOptions;

  constructor(options: WriteOptions) {
    this.#options = options;
  }

  /**
   * What a call with this key does: nothing for a read or without a key; the upstream's key; or
   * the gateway's lease, taken here (a refusal, or a stored result to replay, when it is held).
   */
  begin(
    tool: Tool,
    args: Record<string, unknown>,
    key: string | undefined,
    caller: Caller | undefined,
    deadlineMs: number,
    /** More time the call may wait before it goes upstream (a person's approval). */
    waitMs = 0,
  ): WritePlan | Promise<WritePlan | Begun> {
    // Most calls: planned at once, without the async frame and promise of the keyed path.
    if (key === undefined || tool.annotations.readOnlyHint) return NOTHING_TO_DO;
    return this.#begin(tool, args, key, caller, deadlineMs, waitMs);
  }

  async #begin(
    tool: Tool,
    args: Record<string, unknown>,
    key: string,
    caller: Caller | undefined,
    deadlineMs: number,
    waitMs: number,
  ): Promise<WritePlan | Begun> {
    const owner = caller?.subject ?? '';
    // Scoped to the caller and the tool: the same key from another caller is another write.
    const id = digest(`${owner}\0${tool.name}\0${key}`);
    if (tool.binding.idempotencyKeyArg !== undefined || tool.binding.upstreamIdempotency === true) {
      return { by: 'upstream', key, upstreamKey: id };
    }
    const lease: WriteLease = {
      id,
      owner,
      fingerprint: fingerprintOf(tool.name, args),
      // randomUUID draws from a cached pool; randomBytes per call was a syscall each time.
      token: randomUUID(),
    };
    const { store, ttlMs, maxPerCaller } = this.#options;
    const found = await store.begin(lease, waitMs + deadlineMs + LEASE_MARGIN_MS, ttlMs, maxPerCaller);
    const named = `idempotency key '${key}'`;
    switch (found.kind) {
      case 'started':
        return { by: 'gateway', key, lease };
      case 'replay':
        return { replay: replayOf(found.result, key) };
      case 'mismatch':
        return {
          refusal: {
            reason: 'mismatch',
            text: `The ${named} was already used for a call of ${tool.name} with other arguments; nothing was sent. Use a new key for a new write, or repeat the first call's arguments to get its result.`,
          },
        };
      case 'in_progress':
        return {
          refusal: {
            reason: 'in_progress',
            text: `The first call of ${tool.name} with the ${named} is still running; nothing was sent. Retry after ${found.retryAfterMs} ms to get its result.`,
            retryAfterMs: found.retryAfterMs,
          },
        };
      case 'unknown':
        return {
          refusal: {
            reason: 'unknown',
            text: `The first call of ${tool.name} with the ${named} was cut off mid-call (its gateway went away) after it may have reached the API: whether it took effect is unknown, and it is not run again under this key. Check with a read, then write with a new key if it did not happen.`,
          },
        };
      default:
        return {
          refusal: {
            reason: 'too_many_keys',
            text: `You hold ${maxPerCaller} idempotency keys already (IDEMPOTENCY_MAX_KEYS_PER_CALLER), each kept ${ttlMs} ms (IDEMPOTENCY_TTL_MS); nothing was sent. Call without a key, or later.`,
          },
        };
    }
  }

  /**
   * Keeps a keyed call's result for its repeats, or lets the key go when the call surely did
   * nothing upstream (refused before sending, a connection never made, a 429 or 503: the API said
   * it did not take the request), so a repeat runs it.
   */
  async finish(
    plan: WritePlan & { by: 'gateway' },
    first: ToolResult | undefined,
    final: ToolResult | undefined = first,
  ): Promise<void> {
    // Whether anything was done is the upstream call's own answer (`first`): a job it accepted
    // (202) was done, whatever following it ended as (a deadline, a cancel); what a repeat gets
    // is the answer the caller got (`final`), or the first when the caller got none.
    const report = first?._meta[UPSTREAM_REPORT_KEY];
    const nothingDone =
      first === undefined ||
      (first.accepted === undefined &&
        ((first.isError && !first.outcomeUnknown && (report === undefined || report.status === null)) ||
          (first.isError && (report?.status === 429 || report?.status === 503))));
    if (nothingDone) {
      await this.#options.store.abandon(plan.lease);
      return;
    }
    await this.#options.store.finish(plan.lease, this.#kept(final ?? first));
  }

  /** The result as kept: whole when it fits IDEMPOTENCY_MAX_RESULT_BYTES, else a note that it ended. */
  #kept(result: ToolResult): Record<string, unknown> {
    const { accepted: _a, outcomeUnknown: _o, ...rest } = result;
    const limit = this.#options.maxResultBytes;
    // Most results are far below the limit: their content's length (structuredContent repeats it)
    // says so without serializing the whole result for a measure (that was 10% of a keyed call).
    if (roughBytes(rest) * 2 + 4096 <= limit) return rest;
    const text = JSON.stringify(rest);
    if (Buffer.byteLength(text) <= limit) return rest;
    const status = result._meta[UPSTREAM_REPORT_KEY]?.status;
    return {
      content: [
        {
          type: 'text',
          text: `The call ended${status ? ` (HTTP ${status})` : ''}${result.isError ? ' with an error' : ''}, but its result (${Buffer.byteLength(text)} bytes) was larger than IDEMPOTENCY_MAX_RESULT_BYTES (${limit}) and was not kept; read the resource to see it.`,
        },
      ],
      isError: result.isError,
      _meta: {},
    };
  }
}

/** An upper bound of a result's content in bytes (UTF-8 takes at most 3 per UTF-16 unit), or Infinity when it cannot tell. */
function roughBytes(result: Record<string, unknown>): number {
  const content = result.content;
  if (!Array.isArray(content)) return Number.POSITIVE_INFINITY;
  let units = 0;
  for (const item of content as Array<Record<string, unknown>>) {
    const value = item.text ?? item.data ?? (item.resource as Record<string, unknown> | undefined)?.text;
    if (typeof value === 'string') units += value.length;
    else if (value !== undefined || item.resource !== undefined) return Number.POSITIVE_INFINITY;
  }
  return units * 3;
}

/**
 * A stored result as a repeat gets it: no upstream report (nothing was sent), marked as a replay,
 * and still saying when the first call's outcome is unknown (a repeat must not read as a failure
 * to retry under the same key).
 */
function replayOf(stored: Record<string, unknown>, key: string): Record<string, unknown> {
  const {
    [UPSTREAM_REPORT_KEY]: _report,
    [WRITE_META]: write,
    ...meta
  } = (stored._meta ?? {}) as Record<string, unknown>;
  const unknown = (write as { outcome?: unknown } | undefined)?.outcome === 'unknown';
  const said = { key, by: 'gateway', replayed: true, ...(unknown ? { outcome: 'unknown' } : {}) };
  return { ...stored, _meta: { ...meta, [WRITE_META]: said } };
}

/** What a key was used for: the tool and its arguments, as text when short, else their digest (a hash per call was 2% of a keyed write). */
function fingerprintOf(tool: string, args: Record<string, unknown>): string {
  const text = `${tool}\0${canonical(args)}`;
  return text.length <= 128 ? text : digest(text);
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** JSON with object keys sorted at every level: the same arguments give the same text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)); // (an object's keys are never equal)
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
