/** A bad command line: exit code 2 with the message. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
