/**
 * The longest conversation title the service stores, after stripping: the real V0 server's
 * `Field(max_length=200)` on a rename (v0/validation/rename-body.ts), which the scripted agent's own
 * titles honour on both faces (agent-script.ts).
 */
export const MAX_TITLE_LENGTH = 200;
