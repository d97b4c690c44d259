// How the agent prints its steps: on a terminal, a spinner with the elapsed time shows that a
// step is still working (a retry's wait, say); when piped, plain lines only. The text it is
// given may come from strangers (a streamed digest, a tool's name): shown, not obeyed.
import type { Writable } from 'node:stream';
import { shown, shownLine } from './terminal-text.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface StepOutput {
  step(text: string): void;
  stream(text: string): void;
  done(): void;
}

export function plainOutput(out: Writable): StepOutput {
  return {
    step: (text) => out.write(`${shown(text)}\n`),
    stream: (text) => out.write(shown(text)),
    done: () => undefined,
  };
}

export function terminalOutput(out: Writable): StepOutput {
  let timer: NodeJS.Timeout | undefined;
  let spinning = false;
  let label = '';
  let since = Date.now();
  let frame = 0;
  const clear = () => {
    if (spinning) out.write('\r\x1b[2K');
    spinning = false;
  };
  const stop = () => {
    clearInterval(timer);
    timer = undefined;
    clear();
  };
  const start = () => {
    since = Date.now();
    timer = setInterval(() => {
      clear();
      out.write(`${FRAMES[frame++ % FRAMES.length]} ${label} ${((Date.now() - since) / 1000).toFixed(1)} s`);
      spinning = true;
    }, 100);
    timer.unref();
  };
  return {
    step(text) {
      stop();
      out.write(`${shown(text)}\n`);
      const match = /^\d+\. (.*)$/.exec(text.trim());
      if (match) {
        label = shownLine(match[1] ?? '');
        start();
      }
    },
    stream(text) {
      // Streamed text is its own progress: no spinner over it.
      stop();
      out.write(shown(text));
    },
    done: stop,
  };
}
