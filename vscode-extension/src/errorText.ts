/** What a caught value says, for a message to the user or the model: an Error's message, else the value as text. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
