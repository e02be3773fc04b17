export { isConnectionLost, isUnreachable } from './connection-errors.js';
export { lookupAll, UpstreamAddresses } from './upstream-addresses.js';
export type { Resolve, UpstreamAddress, UpstreamAddressesOptions, UpstreamLog } from './upstream-addresses.js';
