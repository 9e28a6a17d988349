/**
 * Days and instants in query parameters (`from`, `to`), checked as calendars know them: a regular
 * expression lets `2026-13-01` or `2026-02-30` through, and the code behind it then fails in ways
 * a client cannot read (a DynamoDB key range the wrong way round, an invalid `Date`). A value that
 * is no real day or time is a 422 naming its field, worded as Pydantic words it
 * (`date_from_datetime_parsing`, `datetime_from_date_parsing`), and a range whose start lies after
 * its end is a 422 on `from`.
 */
import * as z from "zod/mini";
import { validationError } from "#functions/errors";
import { pydanticIssue } from "#functions/http/validation";

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_LENGTH = "YYYY-MM-DD".length;
const INSTANT_LENGTH = "YYYY-MM-DDTHH:MM:SS.mmmZ".length;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?Z)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** What is wrong with a day or time (Pydantic's wording), or undefined when it is a real one. */
function calendarProblem(text: string, pattern: RegExp): string | undefined {
  const match = pattern.exec(text);
  if (!match) return text.length < 10 ? "input is too short" : "invalid format, expected YYYY-MM-DD";
  const [, year = "", month = "", day = "", hour, minute, second] = match;
  const monthNumber = Number(month);
  if (monthNumber < 1 || monthNumber > 12) return "month value is outside expected range of 1-12";
  const dayNumber = Number(day);
  if (dayNumber < 1 || dayNumber > daysInMonth(Number(year), monthNumber)) {
    return "day value is outside expected range";
  }
  if (hour !== undefined && Number(hour) > 23) return "hour value is outside expected range of 0-23";
  if (minute !== undefined && Number(minute) > 59) return "minute value is outside expected range of 0-59";
  if (second !== undefined && Number(second) > 59) return "second value is outside expected range of 0-59";
  return undefined;
}

/** A UTC day, `YYYY-MM-DD`, that exists. */
export const calendarDay = (description: string) =>
  z.string().check(
    z.maxLength(DAY_LENGTH),
    z.superRefine((value, ctx) => {
      if (value.length > DAY_LENGTH) return;
      const problem = calendarProblem(value, DAY);
      if (problem === undefined) return;
      ctx.issues.push({
        code: "custom",
        input: value,
        message: problem,
        params: pydanticIssue(
          "date_from_datetime_parsing",
          `Input should be a valid date or datetime, ${problem}`,
          {
            error: problem,
          },
        ),
      });
    }),
    z.meta({ format: "date", pattern: DAY.source }),
    z.describe(`${description} (UTC, YYYY-MM-DD).`),
  );

/** A UTC day (`YYYY-MM-DD`) or time (`YYYY-MM-DDTHH:MM[:SS[.mmm]]Z`) that exists. */
export const dayOrInstant = (description: string) =>
  z.string().check(
    z.maxLength(INSTANT_LENGTH),
    z.superRefine((value, ctx) => {
      if (value.length > INSTANT_LENGTH) return;
      const problem = calendarProblem(value, INSTANT);
      if (problem === undefined) return;
      ctx.issues.push({
        code: "custom",
        input: value,
        message: problem,
        params: pydanticIssue(
          "datetime_from_date_parsing",
          `Input should be a valid datetime or date, ${problem}`,
          {
            error: problem,
          },
        ),
      });
    }),
    z.meta({ pattern: INSTANT.source }),
    z.describe(`${description} (YYYY-MM-DD or an ISO 8601 UTC time, e.g. 2026-11-21T12:00:00Z).`),
  );

/** The first millisecond a day or instant names. */
export function rangeStart(value: string): number {
  return Date.parse(DAY.test(value) ? `${value}T00:00:00.000Z` : value);
}

/** The last millisecond a day or instant names (a day: its whole length). */
export function rangeEnd(value: string): number {
  return DAY.test(value) ? Date.parse(`${value}T23:59:59.999Z`) : Date.parse(value);
}

/**
 * A check for a query object with `from` and `to`: a range that ends before it starts is a 422 on
 * `from`. Values that are no real day or time are reported by their own fields' checks.
 */
export function orderedRange<T extends { from?: string | undefined; to?: string | undefined }>() {
  return z.superRefine<T>((query, ctx) => {
    if (query.from === undefined || query.to === undefined) return;
    const start = rangeStart(query.from);
    const end = rangeEnd(query.to);
    if (Number.isNaN(start) || Number.isNaN(end) || start <= end) return;
    ctx.issues.push({
      code: "custom",
      input: query.from,
      path: ["from"],
      message: "from after to",
      params: pydanticIssue("value_error", "Value error, from must not be later than to"),
    });
  });
}

const DAY_MS = 86_400_000;
const dayOfEpoch = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

/**
 * The days a day-series route answers, `from` to `to` with both included: `to` defaults to today,
 * `from` to the `defaultDays` ending on `to`. A range of more than `maxDays` days, or one that ends
 * before it starts, is a 422 on `from`.
 */
export function dayRange(
  query: { from?: string | undefined; to?: string | undefined },
  today: string,
  limits: { defaultDays: number; maxDays: number },
): { from: string; to: string; days: number } {
  const to = query.to ?? today;
  const from = query.from ?? dayOfEpoch(Date.parse(`${to}T00:00:00Z`) - (limits.defaultDays - 1) * DAY_MS);
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (!Number.isFinite(days) || days < 1 || days > limits.maxDays) {
    throw validationError([
      {
        type: "value_error",
        loc: ["query", "from"],
        msg: `Value error, from must be a valid day on or before to, at most ${limits.maxDays} days before it`,
        input: query.from ?? from,
      },
    ]);
  }
  return { from, to, days };
}
