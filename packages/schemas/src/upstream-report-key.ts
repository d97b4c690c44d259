// Where a tool result's `_meta` carries the upstream report (upstream-report.ts), alone, so
// that a program can name the key without loading the schema (and TypeBox with it).
export const UPSTREAM_REPORT_KEY = 'agentwire.dev/upstream';
