/**
 * A mistake in how a command was called (a flag, a value, a missing file). CLIs print its message
 * with their usage text and exit with `EXIT.usage`; anything else is a failure of the run itself.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
