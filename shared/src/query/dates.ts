import type { Value } from './ast.js';

/**
 * Date literals (docs/architecture.md §6). Stored dates are ISO 8601 UTC strings from `toISOString()`, so a
 * date value resolves to normalized ISO text and compares as a string. A *day* (a date-only
 * literal, `today`, `yesterday`, `tomorrow`) is the half-open UTC range [start, next day); an
 * *instant* (an ISO instant with offset, `now`, `±N(d|w|m|y)`) is one point in time.
 */
export type ResolvedDate = { kind: 'day'; start: string; end: string } | { kind: 'instant'; iso: string };

const DAY_MS = 86_400_000;
/** Every resolved date is clamped into 0000-01-01 … 9999-12-31 so ISO text keeps its 4-digit year and sorts. */
const MIN_MS = utc(0, 0, 1);
const MAX_MS = utc(10_000, 0, 1) - 1;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:Z|([+-])(\d{2}):(\d{2})))?$/;

/** UTC milliseconds of a calendar date, valid for years 0–9999 (Date.UTC maps 0–99 to 1900s). */
function utc(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return d.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(utc(year, month + 1, 1) - DAY_MS).getUTCDate();
}

/**
 * Reads an ISO 8601 literal: `YYYY-MM-DD` (a day) or `YYYY-MM-DDTHH:MM[:SS[.sss]](Z|±HH:MM)`
 * (an instant). Returns undefined for text that is not a real calendar date or time.
 */
export function readIso(text: string): ResolvedDate | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const n = (i: number): number => Number(m[i] ?? 0);
  const [year, month, day, h, min, sec, offH, offM] = [n(1), n(2) - 1, n(3), n(4), n(5), n(6), n(9), n(10)];
  if (month < 0 || month > 11 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const start = utc(year, month, day);
  if (m[4] === undefined) return dayOf(start);
  if (h > 23 || min > 59 || sec > 59 || offH > 23 || offM > 59) return undefined;
  const offset = (m[8] === '-' ? -1 : 1) * (offH * 60 + offM);
  const ms = ((h * 60 + min - offset) * 60 + sec) * 1000 + Number((m[7] ?? '').padEnd(3, '0'));
  return instantOf(start + ms);
}

function iso(ms: number): string {
  return new Date(Math.min(MAX_MS, Math.max(MIN_MS, ms))).toISOString();
}

function dayOf(startMs: number): ResolvedDate {
  return { kind: 'day', start: iso(startMs), end: iso(startMs + DAY_MS) };
}

function instantOf(ms: number): ResolvedDate {
  return { kind: 'instant', iso: iso(ms) };
}

/** `now` moved by whole months, keeping the day when it exists, else the month's last day. */
function addMonths(now: Date, months: number): number {
  const total = now.getUTCFullYear() * 12 + now.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  if (year < 0) return MIN_MS;
  if (year > 9999) return MAX_MS;
  const month = total - year * 12;
  const day = Math.min(now.getUTCDate(), daysInMonth(year, month));
  return utc(year, month, day) + (now.getTime() - utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/**
 * Resolves a date value against `now` (UTC). Returns undefined for non-date values and for a
 * `date` whose text is not valid ISO (the parser rejects those first).
 */
export function resolveDate(v: Value, now: Date): ResolvedDate | undefined {
  switch (v.type) {
    case 'date':
      return readIso(v.value);
    case 'dateword': {
      if (v.value === 'now') return instantOf(now.getTime());
      const today = utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      return dayOf(today + { today: 0, yesterday: -1, tomorrow: 1 }[v.value] * DAY_MS);
    }
    case 'relative': {
      const { amount, unit } = v;
      if (unit === 'd' || unit === 'w') return instantOf(now.getTime() + amount * (unit === 'w' ? 7 : 1) * DAY_MS);
      return instantOf(addMonths(now, amount * (unit === 'y' ? 12 : 1)));
    }
    default:
      return undefined;
  }
}
