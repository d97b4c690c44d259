// The agent's exit codes, documented in the README and tested.
export const EXIT = {
  ok: 0,
  /** The task failed: a step's error that retries could not fix. */
  taskFailed: 1,
  /** Bad command line or configuration. */
  usage: 2,
  /** --max-requests or --max-bytes was reached. */
  budget: 3,
  /** --deadline passed. */
  deadline: 4,
  /** The signed-in user may not do a step (e.g. `--as analyst` replying): each path says why. */
  refused: 5,
} as const;
