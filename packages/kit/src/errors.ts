/**
 * An error whose message is meant for the client. The error handler shows the message of
 * an HttpError whatever its status; other 5xx errors are logged and answered generically.
 */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}
