// @agentwire/agent-cli: The agent command: a ledgered multi-step task against the toy API, directly and through MCP.
// Not built yet: it arrives with issue 5. Any export added here becomes public API.
export const PLANNED_IN_ISSUE = 5;
