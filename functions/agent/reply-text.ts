/**
 * A reply's text as a model produces it, piece by piece, in content blocks (a tool round's preamble,
 * the final answer, …). The text is the blocks, each trimmed, the empty ones left out, joined by a
 * blank line: the same text whether it was streamed or read at once. What it hands to `emit` along
 * the way is final (leading whitespace is dropped, trailing whitespace held back until more text
 * follows), so the pieces a visitor saw add up to exactly the stored reply.
 */
export class ReplyText {
  private text = "";
  /** Whitespace at the end of the current block, held back until more text follows. */
  private held = "";
  private blockHasText = false;

  constructor(private readonly emit?: (delta: string) => void) {}

  /** Starts a new content block. */
  block(): void {
    this.held = "";
    this.blockHasText = false;
  }

  append(piece: string): void {
    const rest = this.blockHasText ? piece : piece.trimStart();
    if (rest === "") return;
    const body = rest.trimEnd();
    if (body === "") {
      this.held += rest;
      return;
    }
    const separator = !this.blockHasText && this.text !== "" ? "\n\n" : "";
    const delta = `${separator}${this.held}${body}`;
    this.held = rest.slice(body.length);
    this.blockHasText = true;
    this.text += delta;
    this.emit?.(delta);
  }

  get value(): string {
    return this.text;
  }
}
