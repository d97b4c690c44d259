// The client's guarding rules one function at a time, at their edges: how a failure is
// classified, how a server's wait is read, when a budget says no, what the scrubber replaces.
// Written to kill the mutants `pnpm test:mutation` found surviving the end-to-end tests.
import { describe, expect, it } from 'vitest';
import type { Sent } from '../src/attempt.js';
import { classifyFailure, errorFromResponse } from '../src/failure.js';
import {
  AbortedError,
  ConnectionError,
  DeadlineExceededError,
  HttpClientError,
  InvalidArgumentError,
  NotFoundError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
} from '../src/index.js';
import { RetryBudget } from '../src/retry-budget.js';
import { breakerOutcome } from '../src/retry-loop.js';
import { isReplaySafe, serverRetryDelay, serverRetryOverride } from '../src/retry-policy.js';
import { RunBudget } from '../src/run-budget.js';
import { REDACTED, Scrubber } from '../src/scrubber.js';

const at = { method: 'GET', path: '/x' };
const ctx = { ...at, callerSignal: undefined, timer: undefined, timeoutMs: 100 };

describe('classifyFailure', () => {
  it("names the caller's abort, the caller's deadline signal, and our two timers", () => {
    const aborted = new AbortController();
    aborted.abort(new Error('changed my mind'));
    const abortedError = classifyFailure(new Error('x'), { ...ctx, callerSignal: aborted.signal });
    expect(abortedError).toBeInstanceOf(AbortedError);
    expect(abortedError.message).toBe('GET /x: aborted by the caller');
    const timedOut = new AbortController();
    timedOut.abort(Object.assign(new Error('late'), { name: 'TimeoutError' }));
    const deadline = classifyFailure(new Error('x'), { ...ctx, callerSignal: timedOut.signal });
    expect(deadline).toBeInstanceOf(DeadlineExceededError);
    expect(deadline.message).toBe("GET /x: the caller's deadline signal fired");
    const ours = classifyFailure(new Error('x'), { ...ctx, timer: 'deadline' });
    expect(ours).toBeInstanceOf(DeadlineExceededError);
    expect(ours.message).toBe('GET /x: the deadline passed during the attempt');
    const timeout = classifyFailure(new Error('x'), { ...ctx, timer: 'timeout' });
    expect(timeout).toBeInstanceOf(TimeoutError);
    expect(timeout).toMatchObject({
      timeoutMs: 100,
      message: 'GET /x: no complete response within the 100 ms timeout',
    });
    // A signal that is not aborted changes nothing.
    const live = new AbortController();
    expect(classifyFailure(new Error('reset'), { ...ctx, callerSignal: live.signal })).toBeInstanceOf(ConnectionError);
  });

  it('keeps our own errors, refuses malformed requests, and reads the code from the error or its cause', () => {
    const own = new AbortedError('mine', at);
    expect(classifyFailure(own, ctx)).toBe(own);
    const invalid = classifyFailure(Object.assign(new Error('bad header'), { code: 'UND_ERR_INVALID_ARG' }), ctx);
    expect(invalid).toBeInstanceOf(InvalidArgumentError);
    expect(invalid.message).toBe('GET /x: the request could not be sent (UND_ERR_INVALID_ARG): bad header');
    expect(classifyFailure(Object.assign(new Error('y'), { code: 'ERR_INVALID_CHAR' }), ctx)).toBeInstanceOf(
      InvalidArgumentError,
    );
    // Only at the start of the code: a code that merely contains the words is a network error.
    expect(classifyFailure(Object.assign(new Error('y'), { code: 'X_UND_ERR_INVALID_ARG' }), ctx)).toBeInstanceOf(
      ConnectionError,
    );
    const fromCause = classifyFailure(Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNRESET' } }), ctx);
    expect(fromCause.message).toBe('GET /x: connection failed (ECONNRESET): fetch failed');
    const noCode = classifyFailure('just a string', ctx);
    expect(noCode).toBeInstanceOf(ConnectionError);
    expect(noCode.message).toBe('GET /x: connection failed (network error): just a string');
    expect(classifyFailure(undefined, ctx).message).toBe('GET /x: connection failed (network error): undefined');
    expect(classifyFailure(Object.assign(new Error('n'), { code: 42 }), ctx).message).toBe(
      'GET /x: connection failed (network error): n',
    );
  });
});

describe('errorFromResponse', () => {
  const call = { ...at, now: Date.parse('2026-06-10T09:00:00Z'), scrubber: new Scrubber(['sekrit-key']) };
  it('reads the envelope, a bare message, or the start of a body that is not JSON', () => {
    const envelope = errorFromResponse(
      409,
      { 'request-id': 'req_1' },
      '{"error":{"type":"conflict_error","message":"busy"}}',
      call,
    );
    expect(envelope).toMatchObject({ status: 409, type: 'conflict_error', serverMessage: 'busy', requestId: 'req_1' });
    expect(errorFromResponse(400, {}, '{"message":"plain"}', call)).toMatchObject({ serverMessage: 'plain' });
    // A byte order mark before the envelope is not part of it.
    expect(errorFromResponse(400, {}, '\ufeff{"error":{"type":"t","message":"m"}}', call)).toMatchObject({
      type: 't',
      serverMessage: 'm',
    });
    expect(
      errorFromResponse(400, {}, '{"error":{"type":7,"message":8},"message":9}', call).serverMessage,
    ).toBeUndefined();
    expect(errorFromResponse(400, {}, '{"error":"flat"}', call).serverMessage).toBeUndefined();
    expect(errorFromResponse(400, {}, 'null', call).serverMessage).toBeUndefined();
    expect(errorFromResponse(502, { 'x-request-id': 'req_2' }, `  <html>${'x'.repeat(300)}`, call)).toMatchObject({
      serverMessage: `<html>${'x'.repeat(194)}`,
      requestId: 'req_2',
    });
    expect(errorFromResponse(502, {}, '   ', call).serverMessage).toBeUndefined();
    expect(errorFromResponse(401, {}, '{"message":"bad key sekrit-key"}', call).serverMessage).toBe(
      `bad key ${REDACTED}`,
    );
  });

  it("takes the class from the envelope's type before the status, with a secret in the type scrubbed", () => {
    const typed = errorFromResponse(400, {}, '{"error":{"type":"not_found_error","message":"gone"}}', call);
    expect(typed).toBeInstanceOf(NotFoundError);
    expect(typed.type).toBe('not_found_error');
    const leaky = errorFromResponse(500, {}, '{"error":{"type":"sekrit-key","message":"x"}}', call);
    expect(leaky.type).toBe(REDACTED);
  });

  it('carries the wait and the x-should-retry override', () => {
    const error = errorFromResponse(503, { 'retry-after': '2', 'x-should-retry': 'false' }, '', call);
    expect(error).toMatchObject({ retryAfterMs: 2000, retryable: false });
  });
});

describe('serverRetryDelay', () => {
  const now = Date.parse('2026-06-10T09:00:00Z');
  const delay = (headers: Record<string, string>) => serverRetryDelay(headers, now);
  it('reads retry-after-ms first, then seconds, then an HTTP-date', () => {
    expect(delay({ 'retry-after-ms': '1500' })).toBe(1500);
    expect(delay({ 'retry-after-ms': ' 12.5 ' })).toBe(13);
    expect(delay({ 'retry-after-ms': '1.25' })).toBe(2);
    expect(delay({ 'retry-after-ms': '250', 'retry-after': '9' })).toBe(250);
    expect(delay({ 'retry-after': '3' })).toBe(3000);
    expect(delay({ 'retry-after': ' 0.25 ' })).toBe(250);
    expect(delay({ 'retry-after': '1.05' })).toBe(1050);
    expect(delay({ 'retry-after': 'Wed, 10 Jun 2026 09:00:05 GMT' })).toBe(5000);
    expect(delay({ 'retry-after': 'Wed, 10 Jun 2026 08:59:00 GMT' })).toBe(0);
    // A date that starts or ends with digits is still a date, not a number to refuse.
    expect(delay({ 'retry-after': '2026-06-10T09:00:07+00:00' })).toBe(7000);
  });

  it('ignores what it cannot read, whole: negative, exponents, partial numbers, junk', () => {
    for (const ms of ['-5', '1e3', '12ms', 'x12', '1.', '.5', '1.5x', '1 2']) {
      expect(delay({ 'retry-after-ms': ms }), ms).toBeUndefined();
    }
    // An unreadable retry-after-ms falls through to Retry-After.
    expect(delay({ 'retry-after-ms': 'soon', 'retry-after': '2' })).toBe(2000);
    for (const value of [
      '-1',
      '+2',
      '1e3',
      '2.5e1',
      '1.2.3',
      '3 seconds',
      'a3',
      '',
      '   ',
      'tomorrow',
      '1.x',
      // Read by V8's Date.parse as dates in 2001 and 2099; they are not HTTP-dates.
      'a.1',
      'a 2099',
      'a Sun 2099',
      // Shaped like a date, but not one.
      'Sunday soon',
      '2026-99-99T00:00:00Z',
      '2026-06-10',
      'Someday, 10 Jun 2026',
    ]) {
      expect(delay({ 'retry-after': value }), value).toBeUndefined();
    }
    expect(delay({})).toBeUndefined();
  });
});

describe('serverRetryOverride and isReplaySafe', () => {
  it('take only true or false, in any case and spacing', () => {
    expect(serverRetryOverride({ 'x-should-retry': ' TRUE ' })).toBe(true);
    expect(serverRetryOverride({ 'x-should-retry': 'False' })).toBe(false);
    expect(serverRetryOverride({ 'x-should-retry': 'yes' })).toBeUndefined();
    expect(serverRetryOverride({})).toBeUndefined();
  });

  it('treat every safe or idempotent method as replayable, POST only with a key, and obey a declaration', () => {
    for (const method of ['GET', 'head', 'OPTIONS', 'TRACE', 'PUT', 'delete'])
      expect(isReplaySafe(method, false)).toBe(true);
    expect(isReplaySafe('POST', false)).toBe(false);
    expect(isReplaySafe('PATCH', false)).toBe(false);
    expect(isReplaySafe('POST', true)).toBe(true);
    expect(isReplaySafe('GET', false, false)).toBe(false);
    expect(isReplaySafe('POST', false, true)).toBe(true);
  });
});

describe('RunBudget', () => {
  const check = (budget: RunBudget, cost = 0) => {
    try {
      budget.check({ ...at, cost });
      return 'ok';
    } catch (error) {
      return (error as Error).message;
    }
  };
  it('allows exactly up to each limit, and says which one stopped it', () => {
    // A limit given as undefined is no limit, as one left out is.
    const attempts = new RunBudget({ maxAttempts: 2, maxBytes: undefined, maxCost: undefined });
    attempts.chargeAttempt(0);
    expect(check(attempts)).toBe('ok');
    attempts.chargeAttempt(0);
    expect(check(attempts)).toBe('GET /x: budget exceeded: 2 of 2 attempts used');
    const bytes = new RunBudget({ maxBytes: 100 });
    bytes.chargeBytes(99);
    expect(check(bytes)).toBe('ok');
    bytes.chargeBytes(1);
    expect(check(bytes)).toBe('GET /x: budget exceeded: 100 of 100 bytes used');
    const cost = new RunBudget({ maxCost: 10 });
    cost.chargeAttempt(7);
    expect(check(cost, 3)).toBe('ok');
    expect(check(cost, 4)).toBe('GET /x: budget exceeded: cost 7 + 4 would pass 10');
    expect(cost.used).toEqual({ attempts: 1, bytes: 0, cost: 7 });
    expect(check(new RunBudget({}), 1_000_000)).toBe('ok');
  });

  it('takes 0 and refuses negative or non-finite limits', () => {
    expect(check(new RunBudget({ maxAttempts: 0 }))).toMatch(/0 of 0 attempts/);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new RunBudget({ maxBytes: bad })).toThrow(`RunBudget: maxBytes must be a number >= 0, got ${bad}`);
    }
  });
});

describe('RetryBudget', () => {
  it('never holds more than maxTokens, and refuses a zero size or a negative ratio', () => {
    const budget = new RetryBudget({ maxTokens: 4, tokenRatio: 1 });
    budget.onSuccess();
    expect(budget.tokens).toBe(4);
    budget.onFailure();
    budget.onFailure();
    expect(budget.tokens).toBe(2);
    expect(budget.allowsRetry()).toBe(false);
    budget.onSuccess();
    expect(budget.tokens).toBe(3);
    expect(budget.allowsRetry()).toBe(true);
    expect(new RetryBudget({ tokenRatio: 0 }).tokens).toBe(10);
    expect(() => new RetryBudget({ tokenRatio: -0.1 })).toThrow(
      'RetryBudget: maxTokens must be > 0 and tokenRatio >= 0',
    );
    expect(() => new RetryBudget({ maxTokens: 0 })).toThrow(RangeError);
  });
});

describe('Scrubber', () => {
  it('replaces the longer secret first when one contains another, in text, bytes and headers', () => {
    const scrubber = new Scrubber(['abc', 'abcdef', '']);
    expect(scrubber.active).toBe(true);
    expect(scrubber.text('x abcdef y abc')).toBe(`x ${REDACTED} y ${REDACTED}`);
    expect(scrubber.bytes(Buffer.from('abcdef-abcdef-abc')).toString()).toBe(`${REDACTED}-${REDACTED}-${REDACTED}`);
    expect(scrubber.bytes(Buffer.from('nothing here')).toString()).toBe('nothing here');
    // At every offset, the first and second included.
    expect(scrubber.bytes(Buffer.from('xabc')).toString()).toBe(`x${REDACTED}`);
    expect(scrubber.bytes(Buffer.from('abc')).toString()).toBe(REDACTED);
    expect(scrubber.headers({ a: 'abc', b: ['x', 'abcdef'], c: undefined })).toEqual({
      a: REDACTED,
      b: ['x', REDACTED],
      c: undefined,
    });
  });

  it('returns headers with no secret as they are, and copies them when any value holds one', () => {
    const scrubber = new Scrubber(['abc']);
    const clean = { a: 'x', b: ['y', 'z'], c: undefined };
    expect(scrubber.headers(clean)).toBe(clean);
    // Only in the second value of a list, after an undefined one: still found, the rest kept.
    const late = { a: 'x', c: undefined, b: ['y', 'q abc'] };
    const cleaned = scrubber.headers(late);
    expect(cleaned).not.toBe(late);
    expect(cleaned).toEqual({ a: 'x', c: undefined, b: ['y', `q ${REDACTED}`] });
    expect(late.b[1]).toBe('q abc');
    // Percent-encoded, as in a reflected URL.
    expect(new Scrubber(['a b']).headers({ location: '/x?k=a%20b' })).toEqual({ location: `/x?k=${REDACTED}` });
  });

  it('is inactive with no secrets, and then returns headers as they are', () => {
    const none = new Scrubber(['']);
    expect(none.active).toBe(false);
    const headers = { a: 'abc' };
    expect(none.headers(headers)).toBe(headers);
    expect(none.text('abc')).toBe('abc');
  });

  it('cleans a parsed value of a secret an escape hid, strings and keys, at any depth, and says whether it did', () => {
    const scrubber = new Scrubber(['k/y+z']);
    const value = JSON.parse('{"a":"k\\/y+z","k\\u002Fy+z":[["k/y\\u002bz",1,null,true]],"n":{"m":"plain"}}');
    expect(scrubber.parsed(value)).toEqual({
      value: { a: REDACTED, n: { m: 'plain' }, [REDACTED]: [[REDACTED, 1, null, true]] },
      changed: true,
    });
    expect(scrubber.parsed(JSON.parse('["x", ["y"], {"z": 2}]'))).toEqual({
      value: ['x', ['y'], { z: 2 }],
      changed: false,
    });
    // A body that is one JSON string.
    expect(scrubber.parsed(JSON.parse('"k\\/y+z"'))).toEqual({ value: REDACTED, changed: true });
    expect(scrubber.parsed(7)).toEqual({ value: 7, changed: false });
    expect(scrubber.parsed('plain')).toEqual({ value: 'plain', changed: false });
    // An array's indices are not keys to clean, even when a secret is made of digits.
    expect(new Scrubber(['0']).parsed(['a'])).toEqual({ value: ['a'], changed: false });
  });

  it('gives JSON text back unchanged unless its parsed value hid a secret', () => {
    const scrubber = new Scrubber(['k/y+z']);
    const escapedOnly = '{"quote":"say \\"hi\\"","slash":"a\\/b"}';
    const kept = scrubber.json(escapedOnly, JSON.parse(escapedOnly));
    expect(kept.text).toBe(escapedOnly);
    const hidden = '{"k":"k\\/y+z"}';
    expect(scrubber.json(hidden, JSON.parse(hidden))).toEqual({ text: `{"k":"${REDACTED}"}`, value: { k: REDACTED } });
    // No backslash: nothing can hide, and the value is not even looked at.
    const plain = { k: 'k/y+z' };
    expect(scrubber.json('{"k":"x"}', plain)).toEqual({ text: '{"k":"x"}', value: plain });
    expect(new Scrubber([]).json(hidden, JSON.parse(hidden)).text).toBe(hidden);
  });

  it('catches a secret percent-encoded or JSON-escaped', () => {
    const scrubber = new Scrubber(['k/y"z']);
    expect(scrubber.text(`?key=${encodeURIComponent('k/y"z')}`)).toBe(`?key=${REDACTED}`);
    expect(scrubber.text(JSON.stringify({ key: 'k/y"z' }))).toBe(`{"key":"${REDACTED}"}`);
  });
});

describe('breakerOutcome', () => {
  const failed = (error: HttpClientError, reachedServer = true): Sent => ({ kind: 'error', error, reachedServer });
  const server = (status: number) => new ServerError({ ...at, status });

  it('counts 5xx, timeouts and broken connections as sickness; other answers as health; our own doing as nothing', () => {
    const answered = { kind: 'buffered', status: 200, headers: {}, buffer: Buffer.alloc(0) } as unknown as Sent;
    expect(breakerOutcome(answered)).toBe('success');
    expect(breakerOutcome(failed(server(500)))).toBe('failure');
    expect(breakerOutcome(failed(new NotFoundError({ ...at, status: 499 })))).toBe('success');
    expect(breakerOutcome(failed(new ConnectionError('x', at)))).toBe('failure');
    expect(breakerOutcome(failed(new TimeoutError('x', { ...at, timeoutMs: 1 })))).toBe('failure');
    // A body too large came from an upstream that works.
    expect(breakerOutcome(failed(new ResponseTooLargeError('x', { ...at, limitBytes: 1 })))).toBe('success');
    expect(breakerOutcome(failed(new AbortedError('x', at)))).toBe('none');
    expect(breakerOutcome(failed(new DeadlineExceededError('x', at)))).toBe('none');
    // Never sent: says nothing of the upstream, whatever the error.
    expect(breakerOutcome(failed(server(503), false))).toBe('none');
    expect(breakerOutcome(failed(new ConnectionError('x', at), false))).toBe('none');
  });
});

it('every class here is one of ours', () => {
  expect(new AbortedError('x', at)).toBeInstanceOf(HttpClientError);
});
