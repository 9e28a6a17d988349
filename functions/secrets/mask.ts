/** How a stored secret is shown instead of its value: enough to tell keys apart, never enough to use one. */

/** `••••7c6b` for long secrets, `••••` for short ones. */
export function maskSecret(value: string): string {
  return value.length >= 16 ? `••••${value.slice(-4)}` : "••••";
}
