// Idempotency-Key support as the IETF draft describes it: the first request with a key runs;
// a duplicate after it finished gets the stored response replayed; a duplicate while it is
// still running gets 409; the same key with a different body gets 422. A handler with an effect
// stores it through commitWrite(): the effect and the key's answer in one step of the store.
//
// A claim holds its key for a short lease that the live request renews every third of it until
// the key is answered or let go. A replica that dies mid-request stops renewing, so its keys
// free within one lease and a client's retry runs the request (nothing was stored: the effect
// and the answer are one step), instead of getting 409 for as long as a long flat lease lasts.
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from './auth.js';
import { EnvelopeError } from './envelope-error.js';
import type {
  CommitOutcome,
  IdempotencyCommit,
  IdempotencyLease,
  StateStore,
  StoredResponse,
} from './store/state-store.js';

const RECORD_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a claim holds its key without a renewal: a dead replica's keys free this soon. */
export const IDEMPOTENCY_LEASE_MS = 10 * 1000;
/** How long a live request keeps renewing; past it the lease runs out as a dead one's does. */
export const IDEMPOTENCY_MAX_HOLD_MS = 5 * 60 * 1000;
const KEY_SYNTAX = /^[\x21-\x7e]{1,255}$/;

interface Claim {
  lease: IdempotencyLease;
  /** The key as the client sent it, for the log. */
  clientKey: string;
  /** The route handler has started: its response must be recorded, even if the client left. */
  handlerStarted: boolean;
  /** The key was answered (or its answer written with the effect) or let go; nothing more to do. */
  settled: boolean;
  /** Renews the lease while the request lives; cleared once the key is answered or let go. */
  renewal: NodeJS.Timeout | undefined;
}

function stopRenewing(claim: Claim): void {
  clearInterval(claim.renewal);
  claim.renewal = undefined;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Responses that say "not now" rather than "done": never stored, so a retry runs the request. */
const NOT_FINAL = new Set([408, 409, 425, 429]);

const claims = new WeakMap<FastifyRequest, Claim>();
/** Requests whose key already has a final response: the handler replays it instead of running. */
const replays = new WeakMap<FastifyRequest, StoredResponse>();

/** Reads the header; the draft writes the key as a structured-field string, so quotes are allowed. */
function readKey(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  const unquoted = /^"(.*)"$/.exec(value)?.[1] ?? value;
  if (!KEY_SYNTAX.test(unquoted)) {
    throw new EnvelopeError(
      'invalid_request_error',
      'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
    );
  }
  return unquoted;
}

/**
 * One info line per step of a key (claimed, replayed, stored, released, ...), with the request
 * id: the attempts behind a key, across replicas, can be read back from the logs.
 */
function logStep(request: FastifyRequest, idempotencyKey: string, step: string, err?: unknown): void {
  if (err === undefined) request.log.info({ idempotencyKey, idempotency: step }, 'idempotency');
  else request.log.warn({ idempotencyKey, idempotency: step, err }, 'idempotency');
}

export interface IdempotencyOptions {
  /** Called for each replayed answer (a metric). */
  onReplay?: (() => void) | undefined;
  /** The lease, IDEMPOTENCY_LEASE_MS unless set (tests). */
  leaseMs?: number | undefined;
}

export function createIdempotency(
  store: StateStore,
  callerOf: (request: FastifyRequest) => Caller,
  options: IdempotencyOptions = {},
) {
  const { onReplay = () => undefined, leaseMs = IDEMPOTENCY_LEASE_MS } = options;

  /** Renews the claim every third of the lease, until it is stopped or IDEMPOTENCY_MAX_HOLD_MS. */
  function keepClaim(request: FastifyRequest, claim: Claim): void {
    const claimedAt = Date.now();
    const renew = () => {
      if (Date.now() - claimedAt >= IDEMPOTENCY_MAX_HOLD_MS) {
        stopRenewing(claim);
        logStep(request, claim.clientKey, 'renewals stopped: held for the longest a request may');
        return;
      }
      store.renewIdempotent(claim.lease, leaseMs).then(
        (held) => {
          // Settled: the key's answer is being written (a renewal that lands after it finds the
          // key answered), and the write itself says whether the lease was still this request's.
          if (held || claim.settled || !claim.renewal) return;
          // Run out (the store was out of reach for a whole lease) and perhaps taken by a retry:
          // this request's write will find the token changed and store nothing.
          stopRenewing(claim);
          logStep(request, claim.clientKey, 'lease lost');
        },
        (err: unknown) => request.log.warn({ err }, 'idempotency renewal failed'),
      );
    };
    claim.renewal = setInterval(renew, Math.max(1, Math.floor(leaseMs / 3)));
    claim.renewal.unref();
  }

  async function preHandler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const idempotencyKey = readKey(request);
    if (idempotencyKey === undefined) return;
    const path = request.url.split('?')[0];
    const key = `${callerOf(request).id}:${request.method}:${path}:${idempotencyKey}`;
    const fingerprint = createHash('sha256')
      .update(JSON.stringify(request.body ?? null))
      .digest('hex');
    const lease: IdempotencyLease = { key, token: randomUUID(), fingerprint };
    const begun = await store.beginIdempotent(lease, leaseMs);
    logStep(request, idempotencyKey, begun.kind);
    switch (begun.kind) {
      case 'started': {
        const claim: Claim = {
          lease,
          clientKey: idempotencyKey,
          handlerStarted: false,
          settled: false,
          renewal: undefined,
        };
        claims.set(request, claim);
        keepClaim(request, claim);
        // A request that dies before its handler starts (client gone, connection fault) frees its
        // key, and its handler then does nothing (startHandler). Once the handler has started,
        // onSend records the outcome, whether or not the client is still there.
        const release = () => {
          if (!claim.settled && !claim.handlerStarted) {
            claim.settled = true;
            stopRenewing(claim);
            store.abandonIdempotent(lease).then(
              () => logStep(request, idempotencyKey, 'released: the client left'),
              (err: unknown) => request.log.warn({ err }, 'idempotency release failed'),
            );
          }
        };
        // The client may have left while the key was being claimed: its close has fired already.
        if (request.raw.socket.destroyed) release();
        else reply.raw.once('close', release);
        return;
      }
      case 'in_flight':
        throw new EnvelopeError(
          'conflict_error',
          'a request with this Idempotency-Key is still being processed; retry once it has finished',
          { headers: { 'retry-after': '1' } },
        );
      case 'mismatch':
        throw new EnvelopeError(
          'invalid_request_error',
          'this Idempotency-Key was already used with a different request body; use a new key for a new request',
          { status: 422 },
        );
      case 'full':
        throw new EnvelopeError(
          'api_error',
          `the API holds ${begun.max} Idempotency-Keys, the most it keeps (MAX_IDEMPOTENCY_KEYS; each is kept 24 h after its answer); this request was not run. Retry later, or send it without a key`,
          { status: 503, headers: { 'retry-after': '60' } },
        );
      case 'replay':
        // Sent by startHandler, not here: a reply sent from a hook whose onSend hooks are still
        // running does not stop the chain, and the handler would run a second time.
        replays.set(request, begun.response);
        return;
    }
  }

  /**
   * Call first thing in the route handler. Marks the claim as started, or answers false when
   * the handler must do nothing: the stored response of an earlier request with the key has
   * been sent (a replay), or the key was already let go because the client left first.
   */
  function startHandler(request: FastifyRequest, reply: FastifyReply): boolean {
    const stored = replays.get(request);
    if (stored) {
      onReplay();
      reply.code(stored.status).header('content-type', stored.contentType).header('idempotent-replayed', 'true');
      reply.send(stored.body);
      return false;
    }
    const claim = claims.get(request);
    if (claim?.settled) {
      reply.hijack();
      return false;
    }
    if (claim) claim.handlerStarted = true;
    return true;
  }

  /**
   * Runs the handler's effect and stores the key's answer with it, in one step of the store:
   * `write` gets the commit (undefined without a key) and must pass it to the store method that
   * makes the effect. Then sends `value` with `status`, serialized by the route's schema. If the
   * write fails, the key is let go only if its answer was not stored (the store checks), so a
   * retry replays an answer that was written, and runs the request again if none was.
   */
  async function commitWrite(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    value: unknown,
    write: (commit: IdempotencyCommit | undefined) => Promise<CommitOutcome>,
  ): Promise<FastifyReply> {
    reply.code(status);
    const claim = claims.get(request);
    if (!claim || claim.settled) {
      await write(undefined);
      return reply.send(value);
    }
    // The route's response schema serializes it, as Fastify would on send (typed string | Buffer).
    const body = String(reply.serialize(value));
    const commit: IdempotencyCommit = {
      lease: claim.lease,
      response: { status, body, contentType: JSON_TYPE },
      ttlMs: RECORD_TTL_MS,
    };
    claim.settled = true;
    let outcome: CommitOutcome;
    try {
      // Renewals go on while the write runs: the request is alive until it answers.
      outcome = await write(commit);
    } catch (error) {
      stopRenewing(claim);
      // A refusal the route decided (a limit reached: nothing written) is no failure to warn of.
      if (error instanceof EnvelopeError) logStep(request, claim.clientKey, `refused: ${error.message}`);
      else logStep(request, claim.clientKey, 'write failed', error);
      await store.abandonIdempotent(claim.lease).then(
        () => logStep(request, claim.clientKey, 'released unless stored'),
        (err: unknown) => request.log.warn({ err }, 'idempotency release failed'),
      );
      throw error;
    }
    stopRenewing(claim);
    logStep(request, claim.clientKey, outcome);
    if (outcome === 'lost') {
      throw new EnvelopeError(
        'conflict_error',
        'this request held its Idempotency-Key longer than the lease allows, and another request with the key took over; nothing was stored by this one',
      );
    }
    return reply.header('content-type', JSON_TYPE).send(body);
  }

  /**
   * onSend: keep the handler's final response. Not kept: responses the handler did not make
   * (an error from a hook), 5xx, and "not now" statuses, so that a retry runs the request again.
   */
  async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const claim = claims.get(request);
    if (!claim || claim.settled) return payload;
    claim.settled = true;
    const final = claim.handlerStarted && reply.statusCode < 500 && !NOT_FINAL.has(reply.statusCode);
    if (!final || typeof payload !== 'string') {
      stopRenewing(claim);
      await store.abandonIdempotent(claim.lease);
      logStep(request, claim.clientKey, 'released');
      return payload;
    }
    const contentType = String(reply.getHeader('content-type') ?? JSON_TYPE);
    const answered = await store
      .finishIdempotent({
        lease: claim.lease,
        response: { status: reply.statusCode, body: payload, contentType },
        ttlMs: RECORD_TTL_MS,
      })
      .finally(() => stopRenewing(claim));
    logStep(request, claim.clientKey, answered === 'stored' ? 'answered' : 'lost');
    return payload;
  }

  return { preHandler, startHandler, commitWrite, onSend };
}
