/**
 * HTTP requests being handled by this process's edges (every node in it: they share its event
 * loop). Speculative work (the scroll read-ahead) runs only while the process is not busy with
 * other requests.
 */
export const requestsInFlight = { n: 0 };
