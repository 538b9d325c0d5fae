import { ErrorCodes, isErrorCode, type ErrorCode } from './codes.js';

/** One field at fault, as listed in an error body's `validationErrors` (docs/architecture.md §4). */
export interface FieldError {
  /** JSON-pointer-like path of the field, e.g. `/title` or `/columns/2/query`. */
  field: string;
  /** Short machine code, e.g. `required`, `type`, `maxLength`. */
  code: string;
  message: string;
}

/** Options of an {@link AppError}. */
export interface AppErrorOptions {
  message?: string;
  details?: Record<string, unknown>;
  validationErrors?: FieldError[];
  /** Extra top-level fields of the HTTP error body (the 409 move body's `task`). */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

/** The error shape carried over the bus: `{ok:false, error: WireError}` (docs/architecture.md §3). */
export interface WireError {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  validationErrors?: FieldError[];
  extra?: Record<string, unknown>;
}

const BRAND = Symbol.for('app.AppError');

/**
 * The only error type handlers throw. Its HTTP status comes from the catalogue
 * (`ErrorCodes[code].status`, docs/architecture.md §4).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly validationErrors: FieldError[] | undefined;
  readonly extra: Record<string, unknown> | undefined;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, opts: AppErrorOptions = {}) {
    super(opts.message ?? ErrorCodes[code].message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = opts.details;
    this.validationErrors = opts.validationErrors;
    this.extra = opts.extra;
  }

  /** HTTP status of this error, from the catalogue. */
  get status(): number {
    return ErrorCodes[this.code].status;
  }

  /** True for any AppError, across module copies. */
  static is(e: unknown): e is AppError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }

  /** Wraps anything thrown into an AppError; unknown errors become `INTERNAL`. */
  static from(e: unknown): AppError {
    if (AppError.is(e)) return e;
    return new AppError('INTERNAL', { cause: e });
  }

  /** The bus form of this error. */
  toWire(): WireError {
    const w: WireError = { code: this.code, message: this.message };
    if (this.details) w.details = this.details;
    if (this.validationErrors) w.validationErrors = this.validationErrors;
    if (this.extra) w.extra = this.extra;
    return w;
  }

  /** Rebuilds an AppError from its bus form; an unknown code becomes `INTERNAL`. */
  static fromWire(w: unknown): AppError {
    const o = (typeof w === 'object' && w !== null ? w : {}) as Partial<WireError>;
    if (!isErrorCode(o.code)) return new AppError('INTERNAL', { details: { upstream: String(o.code) } });
    const opts: AppErrorOptions = {};
    if (typeof o.message === 'string') opts.message = o.message;
    if (o.details) opts.details = o.details;
    if (o.validationErrors) opts.validationErrors = o.validationErrors;
    if (o.extra) opts.extra = o.extra;
    return new AppError(o.code, opts);
  }
}

/** Shorthand for a 400 `VALIDATION_FAILED` naming one field. */
export function invalidField(field: string, message: string, code = 'invalid'): AppError {
  return new AppError('VALIDATION_FAILED', {
    message: `${field.replace(/^\//, '') || 'body'}: ${message}`,
    validationErrors: [{ field, code, message }],
  });
}
