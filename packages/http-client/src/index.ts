// @agentwire/http-client: A resilient HTTP client for agents: timeouts, deadlines, retries, a ledger and a budget.
// Not built yet: it arrives with issue 3. Any export added here becomes public API.
export const PLANNED_IN_ISSUE = 3;
