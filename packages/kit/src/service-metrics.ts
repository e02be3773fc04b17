/** Metrics a service adds for what it depends on: upstream errors (the proxy, the frontend). */
import { Counter } from 'prom-client';
import { processRegistry } from './metrics.js';

/** Why a call to an upstream (the proxy's web, the frontend's backend) failed. */
export type UpstreamErrorKind = 'refused' | 'timeout' | 'reset' | 'bad_status' | 'other';

const kindByCode: Record<string, UpstreamErrorKind> = {
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'refused',
  ENETUNREACH: 'refused',
  ENOTFOUND: 'refused',
  EAI_AGAIN: 'refused',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  UND_ERR_SOCKET: 'reset',
};

/** The kind of a failed upstream call from its error's code (Node's or undici's). */
export function upstreamErrorKind(error: unknown): UpstreamErrorKind {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' ? kindByCode[code] : undefined) ?? 'other';
}

let upstreamErrors: Counter<'kind'> | undefined;

/**
 * Counts failed calls to the service's upstream by kind. Per process, not per app: a process runs
 * one service, and the frontend's backend client is made before its app. The counter appears in
 * /metrics from the first call of this (services without an upstream do not show it), every kind
 * at 0, so that a rate() sees the first error.
 */
export function upstreamErrorCounter(): (kind: UpstreamErrorKind) => void {
  if (upstreamErrors === undefined) {
    upstreamErrors = new Counter({
      name: 'upstream_errors_total',
      help: 'Failed calls to the upstream (proxy: web; frontend: backend), by kind: refused, timeout, reset, bad_status (5xx), other',
      labelNames: ['kind'],
      registers: [processRegistry],
    });
    for (const kind of ['refused', 'timeout', 'reset', 'bad_status', 'other'] as const) upstreamErrors.inc({ kind }, 0);
  }
  const counter = upstreamErrors;
  return (kind) => counter.inc({ kind });
}
