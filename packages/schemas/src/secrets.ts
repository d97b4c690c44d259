// Start-up checks of the secrets a server is given: long enough, and not a placeholder copied
// from an example file. The value itself is never repeated in the message.

/** Words that mark a value as a placeholder, not a secret. */
const PLACEHOLDERS = [
  'change-me',
  'changeme',
  'change_me',
  'replace-me',
  'replaceme',
  'placeholder',
  'your-',
  'example',
];

/** What is wrong with a secret, or undefined; the message says how to make a good one. */
export function secretProblem(name: string, value: string, minLength: number): string | undefined {
  const howTo = `make one with e.g. ${name}=$(openssl rand -hex 24)`;
  const lower = value.toLowerCase();
  const word = PLACEHOLDERS.find((p) => lower.includes(p));
  if (word) return `${name} looks like a placeholder (it contains '${word}'); ${howTo}`;
  if (value.length < minLength) return `${name} is too short: use at least ${minLength} characters; ${howTo}`;
  return undefined;
}
