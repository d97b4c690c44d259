// The process behind listTokensApart: counts the list it is sent, answers, and exits.
import { listTokens } from './index.js';

// A caller that went away (its process ended) needs no answer.
process.once('disconnect', () => process.exit(0));
process.once('message', (message) => {
  const { tools, stopAbove } = message as { tools: object[]; stopAbove?: number };
  process.send?.(listTokens(tools, stopAbove), () => process.exit(0));
});
