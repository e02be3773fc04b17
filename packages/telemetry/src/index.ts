/**
 * The OpenTelemetry preload of every service: `node --import=@sample-services/telemetry dist/main.js`, as
 * OpenTelemetry's Node docs start an ES module app. Without an OTLP endpoint, or with
 * OTEL_SDK_DISABLED=true, it loads nothing more: a service with tracing off runs no module of OpenTelemetry.
 */
import { isMainThread } from 'node:worker_threads';
import { tracingWanted } from './wanted.js';

// A worker thread (the SQLite store's writer) runs the preloads too: the process's one SDK is the main thread's.
if (isMainThread && tracingWanted(process.env)) await import('./sdk.js');
