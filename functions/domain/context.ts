/**
 * What every domain function receives besides its input: where the data lives and what time it is.
 * Handlers build one per Lambda instance; tests build their own with a fixed clock.
 */
import type { CallBudget } from "#functions/aws-clients";
import { type Db, dbFromEnvironment } from "#functions/store/dynamodb";

/** Epoch milliseconds. */
export type Clock = () => number;

export interface DomainContext {
  db: Db;
  clock: Clock;
}

export const systemClock: Clock = () => Date.now();

/**
 * The Lambda's context; `budget` sizes the table calls' timeouts to the function (aws-clients.ts).
 * The table client is created on first use, so importing a handler has no side effects.
 */
export function contextFromEnvironment(budget: CallBudget = "request"): DomainContext {
  return {
    get db() {
      return dbFromEnvironment(budget);
    },
    clock: systemClock,
  };
}

export const isoTime = (epochMs: number): string => new Date(epochMs).toISOString();
