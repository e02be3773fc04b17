/**
 * The address cannot be reached at all: nothing listens there (refused), no route or host,
 * or the connection did not open in time. Such an address is passed over for a while.
 */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The connection broke or the upstream closed it (undici: "other side closed") before any answer. */
const connectionLostCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/** True when the error says the upstream address could not be connected to. */
export function isUnreachable(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && unreachableCodes.has(code);
}

/** True when the error says the connection was lost, e.g. reset, not that the upstream was slow or answered badly. */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && connectionLostCodes.has(code);
}
