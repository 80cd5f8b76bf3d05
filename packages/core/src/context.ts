/**
 * What every area service is built from. `Caller` names who acts; the services take it as their
 * first argument and act on that user's resources only.
 */

/** Who is calling: every method acts on this user's resources only. */
export interface Caller {
  readonly userId: string;
}
