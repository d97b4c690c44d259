import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/log-redaction.js';

describe('redactUrl', () => {
  it('replaces the value of every credential parameter, and leaves the rest as it was', () => {
    expect(redactUrl('/mcp?access_token=eyJ.abc.def&x=1')).toBe('/mcp?access_token=[Redacted]&x=1');
    expect(redactUrl('/a?x=1&ACCESS_TOKEN=t&refresh_token=r#f')).toBe(
      '/a?x=1&ACCESS_TOKEN=[Redacted]&refresh_token=[Redacted]#f',
    );
    expect(redactUrl('/a?my_access_token=keep')).toBe('/a?my_access_token=keep');
    expect(redactUrl('/emails?limit=1')).toBe('/emails?limit=1');
  });
});
