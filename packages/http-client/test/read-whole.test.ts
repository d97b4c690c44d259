// The body reader under the buffered attempts, on real streams: the end, the limit, an error,
// and a stream that closes with neither (which must not leave the attempt waiting).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type Read, readWhole } from '../src/read-whole.js';

const fresh = (): Read => ({ chunks: [], bytes: 0 });

describe('readWhole', () => {
  it('reads every chunk to the end', async () => {
    const read = fresh();
    expect(await readWhole(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 10, read)).toBe(false);
    expect(Buffer.concat(read.chunks).toString()).toBe('abcd');
    expect(read.bytes).toBe(4);
  });

  it('stops past the limit, keeps nothing past it, and destroys the body', async () => {
    const read = fresh();
    const body = Readable.from([Buffer.from('abc'), Buffer.from('def'), Buffer.from('ghi')]);
    expect(await readWhole(body, 4, read)).toBe(true);
    expect(Buffer.concat(read.chunks).toString()).toBe('abc');
    expect(read.bytes).toBe(6);
    expect(body.destroyed).toBe(true);
  });

  it("rejects with the stream's error, having counted what came before it", async () => {
    const read = fresh();
    const body = new Readable({ read() {} });
    const reading = readWhole(body, 100, read);
    body.push(Buffer.from('xy'));
    await new Promise((r) => setImmediate(r));
    body.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    await expect(reading).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(read.bytes).toBe(2);
  });

  it('rejects a body closed with neither an end nor an error, as `for await` does', async () => {
    const body = new Readable({ read() {} });
    const reading = readWhole(body, 100, fresh());
    body.destroy();
    await expect(reading).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});
