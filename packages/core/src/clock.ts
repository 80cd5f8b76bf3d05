/** Source of the current time, injectable so tests can control timestamps. */
export interface Clock {
  /** The current time. */
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };
