/** A handler's answer: `Ok(value)` on success, `Err(message)` on failure. */
export interface OkResult<T> {
  readonly ok: true
  readonly value: T
}

export interface ErrResult<E = string> {
  readonly ok: false
  readonly error: E
}

export type Result<T = unknown, E = string> = OkResult<T> | ErrResult<E>

export function Ok<T>(value: T): OkResult<T> {
  return { ok: true, value }
}

export function Err<E = string>(error: E): ErrResult<E> {
  return { ok: false, error }
}

export function isOk<T, E>(result: Result<T, E>): result is OkResult<T> {
  return result.ok
}

export function isErr<T, E>(result: Result<T, E>): result is ErrResult<E> {
  return !result.ok
}

/** True for anything shaped like a Result, so a handler that returns something else is caught. */
export function isResult(value: unknown): value is Result<unknown, unknown> {
  if (value === null || typeof value !== 'object') return false
  const ok = (value as { ok?: unknown }).ok
  return (ok === true && 'value' in value) || (ok === false && 'error' in value)
}
