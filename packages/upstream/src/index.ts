export { isConnectionLost, isUnreachable, upstreamErrorCounter, upstreamErrorKind } from './upstream-errors.js';
export type { UpstreamErrorKind } from './upstream-errors.js';
export { lookupAll, UpstreamAddresses } from './upstream-addresses.js';
export type {
  Resolve,
  UpstreamAddress,
  UpstreamAddressesOptions,
  UpstreamLog,
  UpstreamPoolOptions,
  UpstreamTimers,
} from './upstream-addresses.js';
