// How the gateway reads an upstream job's answers (upstream/jobs.ts): the 202 that starts one,
// the status words monitors use, where a status URL may be, and the progress line a task shows.
import { describe, expect, it } from 'vitest';
import { acceptedOf, failureText, pathUnder, progressLine, statusWordOf } from '../src/upstream/jobs.js';

describe('upstream jobs', () => {
  it('starts a job only on 202 with a Location, resolved against the base URL, with the wait asked for', () => {
    expect(acceptedOf(202, { location: '/exports/1', 'retry-after': '2' }, 'http://api.test/v1')).toEqual({
      location: 'http://api.test/exports/1',
      retryAfterMs: 2000,
    });
    expect(acceptedOf(202, { location: 'jobs/1' }, 'http://api.test/v1')?.location).toBe('http://api.test/v1/jobs/1');
    expect(acceptedOf(200, { location: '/x' }, 'http://api.test')).toBeUndefined();
    expect(acceptedOf(202, {}, 'http://api.test')).toBeUndefined();
  });

  it('follows a status URL only under the upstream base URL', () => {
    expect(pathUnder('http://api.test/v1/jobs/1?x=a&x=b', 'http://api.test/v1')).toEqual({
      path: '/jobs/1',
      query: { x: ['a', 'b'] },
    });
    // A base URL with trailing slashes is the same base.
    for (const base of ['http://api.test/v1/', 'http://api.test/v1//']) {
      expect(pathUnder('http://api.test/v1/jobs/1', base)?.path).toBe('/jobs/1');
    }
    expect(pathUnder('http://api.test/v1/jobs/1', 'not a url')).toBeUndefined();
    expect(pathUnder('http://api.test/other/jobs/1', 'http://api.test/v1')).toBeUndefined();
    expect(pathUnder('http://evil.test/v1/jobs/1', 'http://api.test/v1')).toBeUndefined();
    expect(pathUnder('https://api.test/v1/jobs/1', 'http://api.test/v1')).toBeUndefined();
  });

  it('knows the status words of monitors, and names one it does not know', () => {
    const word = (status: string) => statusWordOf({ status })?.word;
    expect(['Running', 'in_progress', 'NotStarted', 'queued'].map(word)).toEqual(Array(4).fill('working'));
    expect(['Succeeded', 'completed', 'done'].map(word)).toEqual(Array(3).fill('done'));
    expect(['Failed', 'error'].map(word)).toEqual(['failed', 'failed']);
    expect(['Canceled', 'cancelled'].map(word)).toEqual(['cancelled', 'cancelled']);
    expect(statusWordOf({ state: 'exploded' })).toEqual({ word: 'unknown', said: 'exploded' });
    // Any case of the field's name (AWS: Status), and Google's long-running operations (done).
    expect(statusWordOf({ Status: 'IN_PROGRESS' })?.word).toBe('working');
    expect(statusWordOf({ done: false })?.word).toBe('working');
    expect(statusWordOf({ done: true, response: {} })?.word).toBe('done');
    expect(statusWordOf({ done: true, error: { code: 3 } })?.word).toBe('failed');
    expect(statusWordOf({ count: 3 })).toBeUndefined();
    expect(statusWordOf([1])).toBeUndefined();
    // What is shown of it is a word: 100 characters at most, however much the upstream wrote.
    expect(statusWordOf({ status: `running${' '.repeat(1_000_000)}` })).toEqual({
      word: 'working',
      said: `running${' '.repeat(93)}`,
    });
    expect(statusWordOf({ status: 'z'.repeat(500) })?.said).toHaveLength(100);
  });

  it('says how far a job is, and what a failed one said', () => {
    expect(progressLine({ progress: 0.42, message: 'exporting' }, 'running')).toBe('running 42%: exporting');
    expect(progressLine({ percent: 7 }, 'running')).toBe('running 7%');
    expect(progressLine({ progress: 55 }, 'running')).toBe('running 55%');
    expect(progressLine({}, 'queued')).toBe('queued');
    expect(failureText({ error: { message: 'disk full' } })).toBe('disk full');
    expect(failureText({ error: 'quota' })).toBe('quota');
    expect(failureText({ status: 'failed' })).toBe('{"status":"failed"}');
    // 1,000 characters at most, whichever it is.
    for (const body of [
      { error: 'e'.repeat(5_000) },
      { error: { message: 'm'.repeat(5_000) } },
      { message: 'x'.repeat(5_000) },
    ]) {
      expect(failureText(body)).toHaveLength(1_000);
    }
  });
});
