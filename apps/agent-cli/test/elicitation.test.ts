// What the agent answers a server's question when nobody is at a terminal: it declines, and says
// so, rather than go ahead on a yes nobody gave. (At a terminal it asks; the official suite's
// multi round-trip scenario drives the rest through the real agent: scripts/conformance.mjs.)
import { describe, expect, it, vi } from 'vitest';
import { askAtTerminal } from '../src/elicitation.js';

describe('elicitation', () => {
  it('declines without a terminal, saying what was asked', async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const tty = process.stdin.isTTY;
    Object.defineProperty(process.stdin, 'isTTY', { value: false, configurable: true });
    try {
      const answer = await askAtTerminal('Delete report.txt?', {
        type: 'object',
        properties: { confirmed: { type: 'boolean' } },
      });
      expect(answer).toEqual({ action: 'decline' });
      expect(written.join('')).toBe('the server asks: Delete report.txt?\n  declined: no terminal to ask at\n');
    } finally {
      spy.mockRestore();
      Object.defineProperty(process.stdin, 'isTTY', { value: tty, configurable: true });
    }
  });
});
