/**
 * Codes for the answers the server never gave. An `Err` that carries the server's envelope has
 * no client code (`code` is then the envelope's own `code`, when the server sends one).
 */
export const clientErrorCodes = {
  /** fetch rejected: connection refused, DNS, CORS refused by the browser, reset. */
  network: 'FA_CLIENT_NETWORK',
  /** No answer within `timeout` ms. */
  timeout: 'FA_CLIENT_TIMEOUT',
  /** The caller's `signal` aborted the call. */
  aborted: 'FA_CLIENT_ABORTED',
  /** An answer that is not JSON, or JSON that is not a `{ status, message, data }` envelope. */
  badResponse: 'FA_CLIENT_BAD_RESPONSE',
  /** The call could not be sent: a file that cannot be read, a path outside Node. */
  badInput: 'FA_CLIENT_BAD_INPUT',
} as const

/** Every text the client itself writes into an error's `message` (tests import them from here). */
export const clientMessages = {
  network: (reason: string) => `The request failed: ${reason}`,
  unreadable: (reason: string) => `The answer could not be read: ${reason}`,
  timeout: (ms: number) => `No answer within ${ms}ms`,
  aborted: 'The call was aborted',
  notJson: (status: number) => `The server answered HTTP ${status} with a body that is not JSON`,
  notEnvelope: (status: number) => `The server answered HTTP ${status} with JSON that is not an envelope`,
  tokenFailed: (reason: string) => `token function failed: ${reason}`,
  pathOutsideNode: (path: string) => `cannot read '${path}': a path works in Node only; pass a File or Blob`,
  cannotRead: (path: string, reason: string) => `cannot read '${path}': ${reason}`,
  notAFile: 'a file must be a File, a Blob, { data, name }, or (in Node) a path',
  notSerializable: (reason: string) => `the payload cannot be sent as JSON: ${reason}`,
  streamCut: 'The stream ended before its final event',
  streamClosed: 'The stream was closed before its final event',
  eventNotJson: 'An event of the stream is not JSON',
  eventNotEnvelope: 'The final event of the stream is not an envelope',
} as const

export type ClientErrorCode = (typeof clientErrorCodes)[keyof typeof clientErrorCodes]

/** The error side of every client call. */
export interface ClientError {
  /** The envelope's `status` (always false here). */
  status: false
  /** The envelope's `message`, or the client's own text for a `FA_CLIENT_*` code. */
  message: string
  /** The envelope's `data` (`errors`, `error_category`, …); `{}` when there was no envelope. */
  data: Record<string, unknown>
  /** The HTTP status; 0 when no answer arrived (network, timeout, aborted). */
  httpStatus: number
  /** A `FA_CLIENT_*` code when the server never answered with an envelope; else the envelope's own `code`, if any. */
  code?: ClientErrorCode | (string & {})
  /** For `FA_CLIENT_*`: the underlying error (the fetch rejection, the abort reason) or the body that was not an envelope. */
  cause?: unknown
}

export function clientError(code: ClientErrorCode, message: string, httpStatus = 0, cause?: unknown): ClientError {
  const error: ClientError = { status: false, message, data: {}, httpStatus, code }
  if (cause !== undefined) error.cause = cause
  return error
}

/**
 * What a stream's loop throws when the stream fails after it started: a `ClientError` (same fields,
 * same codes) that is also an `Error`, so `catch (error)` gets a stack and `instanceof` works.
 */
export class StreamError extends Error implements ClientError {
  readonly status = false as const
  data: Record<string, unknown>
  httpStatus: number
  code?: ClientErrorCode | (string & {})

  constructor(error: ClientError) {
    super(error.message, error.cause === undefined ? undefined : { cause: error.cause })
    this.name = 'StreamError'
    this.data = error.data
    this.httpStatus = error.httpStatus
    if (error.code !== undefined) this.code = error.code
  }
}

/**
 * A stream's `StreamError` as its typed call knows it: one member per error the action can end with,
 * so comparing `code` narrows `data` (a declared error's own data) as a call's `Err` does. What
 * `stream.isError(error)` narrows a caught value to.
 */
export type StreamErrorOf<Er> = Er extends unknown ? Omit<StreamError, keyof ClientError> & Er : never

/** The message of a thrown value, which need not be an Error. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * True for an action's declared error (the server answered `Fail(code, …)`), false for a transport
 * failure (`FA_CLIENT_*`), a framework failure or a plain `Err`. On a typed call it narrows the error
 * to the action's declared errors.
 */
export function isDeclaredError<E extends ClientError | { code?: string; data: Record<string, unknown> }>(error: E): error is DeclaredErrorIn<E> {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && !code.startsWith('FA_') && (error as { data?: Record<string, unknown> }).data?.code === code
}

/** The declared members of an error union (any declared error, for an untyped call). */
export type DeclaredErrorIn<E> = [Extract<E, { code: string; data: { code: string } }>] extends [never]
  ? E & { code: string; data: { code: string } }
  : Extract<E, { code: string; data: { code: string } }>
