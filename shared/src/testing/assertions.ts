import { expect } from 'vitest';
import { AppError } from '../errors/index.js';

/** Resolves with the AppError `p` rejects with; fails the test when `p` resolves or throws anything else. */
export async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    expect(AppError.is(e), `expected an AppError, got ${String(e)}`).toBe(true);
    return e as AppError;
  }
  return expect.fail('expected the request to fail');
}

/** The AppError `fn` throws; fails the test when it returns or throws anything else. */
export function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    expect(AppError.is(e), `expected an AppError, got ${String(e)}`).toBe(true);
    return e as AppError;
  }
  return expect.fail('expected an AppError');
}

/** Asserts that `p` rejects with an AppError of catalogue `code` and returns it. */
export async function rejects(p: Promise<unknown>, code: string): Promise<AppError> {
  const err = await rejection(p);
  expect(err.code, err.message).toBe(code);
  return err;
}

/** The `field`s (JSON pointers) named by an error's `validationErrors`, in order. */
export const fields = (e: AppError): string[] => (e.validationErrors ?? []).map((v) => v.field);
