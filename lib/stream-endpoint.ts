/**
 * The streaming endpoint's method and path, in a module of their own: the route table, the
 * console's hosting and the stream function itself read them, and the function's bundle then
 * carries these two strings rather than the whole route table.
 */
export const streamEndpoint = { method: "POST", path: "/api/message/stream" } as const;
