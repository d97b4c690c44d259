// Bearer (or x-api-key) authentication with a full key and an optional read-only key.
// Keys are compared in constant time, on their SHA-256 digests so lengths do not leak either.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { EnvelopeError } from './envelope-error.js';

export type Access = 'full' | 'read';

export interface Caller {
  access: Access;
  /** A stable, non-secret id for the key, used to keep per-caller state apart. */
  id: string;
  /**
   * Who is calling, as stored on what it writes and in the logs: a token's `sub` (a user, or
   * the client of a client-credentials token), or `api-key` / `api-key:read` for the keys.
   */
  subject: string;
}

/** A 401 says how to authenticate (RFC 9110, section 11.6.1). */
const CHALLENGE = { headers: { 'www-authenticate': 'Bearer realm="toy-api"' } };

// Not the one-shot crypto.hash, though it saved about 1.5 k instructions a request
// (bench/instructions.mjs, GET /emails): on Node 20 it is a release candidate, from 20.12 on,
// and this package supports every Node 20.
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export class KeyRing {
  readonly #full: Buffer;
  readonly #read: Buffer | undefined;
  // Who each valid key is, made once: a request pays one SHA-256 and two comparisons.
  readonly #fullCaller: Caller;
  readonly #readCaller: Caller | undefined;

  constructor(fullKey: string, readOnlyKey?: string) {
    this.#full = digest(fullKey);
    this.#read = readOnlyKey ? digest(readOnlyKey) : undefined;
    this.#fullCaller = Object.freeze({ access: 'full', id: this.#callerId(fullKey), subject: 'api-key' });
    this.#readCaller = readOnlyKey
      ? Object.freeze({ access: 'read', id: this.#callerId(readOnlyKey), subject: 'api-key:read' })
      : undefined;
  }

  /**
   * The id names a caller in state keys (Redis); an HMAC keyed by the server's own key, so it
   * cannot be checked against guessed keys by whoever can read those keys.
   */
  #callerId(key: string): string {
    return createHmac('sha256', this.#full).update(key).digest('hex').slice(0, 16);
  }

  /** Who is calling, or an authentication error that says what to send. */
  authenticate(headers: IncomingHttpHeaders): Caller {
    const presented = presentedKey(headers);
    if (presented === undefined) {
      throw new EnvelopeError(
        'authentication_error',
        'missing API key; send it as "Authorization: Bearer <key>" or "x-api-key: <key>"',
        CHALLENGE,
      );
    }
    const candidate = digest(presented);
    // Compare against both keys every time, so timing does not tell which one nearly matched.
    const isFull = timingSafeEqual(candidate, this.#full);
    const isRead = this.#read !== undefined && timingSafeEqual(candidate, this.#read);
    if (isFull) return this.#fullCaller;
    if (isRead && this.#readCaller) return this.#readCaller;
    throw new EnvelopeError('authentication_error', 'invalid API key', CHALLENGE);
  }

  toJSON(): string {
    return '[KeyRing]';
  }
}

function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match) {
      throw new EnvelopeError(
        'authentication_error',
        'malformed Authorization header; expected "Bearer <key>"',
        CHALLENGE,
      );
    }
    return match[1];
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.length > 0) return apiKey;
  return undefined;
}
