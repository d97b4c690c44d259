// How the agent prints its steps: on a terminal, a spinner with the elapsed time shows that a
// step is still working (a retry's wait, say); when piped, plain lines only.
import type { Writable } from 'node:stream';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface StepOutput {
  step(text: string): void;
  stream(text: string): void;
  done(): void;
}

export function plainOutput(out: Writable): StepOutput {
  return {
    step: (text) => out.write(`${text}\n`),
    stream: (text) => out.write(text),
    done: () => undefined,
  };
}

export function terminalOutput(out: Writable): StepOutput {
  let timer: NodeJS.Timeout | undefined;
  let shown = false;
  let label = '';
  let since = Date.now();
  let frame = 0;
  const clear = () => {
    if (shown) out.write('\r\x1b[2K');
    shown = false;
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
      shown = true;
    }, 100);
    timer.unref();
  };
  return {
    step(text) {
      stop();
      out.write(`${text}\n`);
      const match = /^\d+\. (.*)$/.exec(text.trim());
      if (match) {
        label = match[1] ?? '';
        start();
      }
    },
    stream(text) {
      // Streamed text is its own progress: no spinner over it.
      stop();
      out.write(text);
    },
    done: stop,
  };
}
