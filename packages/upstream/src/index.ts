export { upstreamErrorCounter, upstreamErrorKind } from './upstream-errors.js';
export type { UpstreamErrorKind } from './upstream-errors.js';
export { upstreamDispatcher } from './upstream-dispatcher.js';
export type { Resolve, UpstreamLog } from './upstream-dispatcher.js';
