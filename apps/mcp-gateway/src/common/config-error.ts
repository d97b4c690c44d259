// A setting that cannot be used: the command prints its message (which names the setting and
// what is allowed) and exits 2. Thrown wherever settings are read or first used.
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
