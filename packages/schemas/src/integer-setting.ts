// A whole-number setting read from its text: the value, or a problem that names the variable, what
// it got and the range allowed. Each program throws the problem as its own configuration error.

/** `fallback` when unset or empty; `unit` follows the range in the problem (" (ms)"). */
export function readInteger(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
  unit = '',
): { value: number } | { problem: string } {
  const n = Number(value || fallback);
  if (Number.isInteger(n) && n >= min && n <= max) return { value: n };
  return { problem: `${name} must be an integer from ${min} to ${max}${unit}, got '${value}'` };
}
