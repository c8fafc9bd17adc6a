// The server's Ok/Err shape (lib/result.ts), copied so the client imports nothing from the server at run time.

export interface OkResult<T> {
  readonly ok: true
  readonly value: T
}

export interface ErrResult<E> {
  readonly ok: false
  readonly error: E
}

export type Result<T, E> = OkResult<T> | ErrResult<E>

export function Ok<T>(value: T): OkResult<T> {
  return { ok: true, value }
}

export function Err<E>(error: E): ErrResult<E> {
  return { ok: false, error }
}

export function isOk<T, E>(result: Result<T, E>): result is OkResult<T> {
  return result.ok
}

export function isErr<T, E>(result: Result<T, E>): result is ErrResult<E> {
  return !result.ok
}
