// stdin as lines, each at most a message's size: split wherever the chunks fall, and a line
// past the limit dropped whole (and said once) while the lines around it go on.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../src/transports/stdio-lines.js';

function reader(max: number) {
  const input = new PassThrough();
  const seen: string[] = [];
  let closed = false;
  readLines(input, max, {
    line: (text) => seen.push(text),
    tooLong: () => seen.push('<too long>'),
    close: () => {
      closed = true;
    },
  });
  return { input, seen, closed: () => closed };
}

describe('readLines', () => {
  it('splits lines wherever the chunks fall, a character split between chunks included, and drops the \\r of \\r\\n', async () => {
    const { input, seen, closed } = reader(100);
    const bytes = Buffer.from('{"a":"Zoë"}\r\n\n{"b":2}\n{"c":3}');
    for (let i = 0; i < bytes.length; i += 3) input.write(bytes.subarray(i, i + 3));
    input.end();
    await expect.poll(closed).toBe(true);
    // The empty line is passed on (the transport skips it); the last line needs no newline.
    expect(seen).toEqual(['{"a":"Zoë"}', '', '{"b":2}', '{"c":3}']);
  });

  it('drops a line past the limit up to its newline, says so once, and keeps a line of exactly the limit', async () => {
    const { input, seen, closed } = reader(8);
    input.write('12345678\n123');
    input.write('456789');
    input.write('0123456789\nok\n');
    input.write('tail past the limit, never ended');
    input.end();
    await expect.poll(closed).toBe(true);
    expect(seen).toEqual(['12345678', '<too long>', 'ok', '<too long>']);
  });
});
