/** One event of a `text/event-stream` body: its name and its data lines joined by `\n`. */
export interface ServerSentEvent {
	event: string;
	data: string;
}

/**
 * Turns the bytes of a `text/event-stream` body into events as they arrive, in pieces of any size:
 * an event, a line or a UTF-8 character may be split across pieces. Follows the parsing rules of
 * the HTML standard for the fields this API sends (`event`, `data`, comments); `id` and `retry`
 * are ignored, as the node never reconnects. The package has no runtime dependencies, hence
 * this small parser.
 */
export class ServerSentEventParser {
	// `stream: true` keeps a character split across pieces until its last byte; a BOM is dropped
	private readonly decoder = new TextDecoder('utf-8');

	private pending = '';

	private eventName = '';

	private dataLines: string[] = [];

	/** Feeds the next piece of the body; answers the events it completed, in order. */
	push(piece: Uint8Array | string): ServerSentEvent[] {
		const text = typeof piece === 'string' ? piece : this.decoder.decode(piece, { stream: true });
		const buffer = this.pending + text;
		const events: ServerSentEvent[] = [];
		let lineStart = 0;
		for (let index = 0; index < buffer.length; index++) {
			const character = buffer[index];
			if (character !== '\n' && character !== '\r') continue;
			// a CR at the end of a piece may be the first half of a CRLF: wait for the next piece
			if (character === '\r' && index + 1 === buffer.length) break;
			const line = buffer.slice(lineStart, index);
			if (character === '\r' && buffer[index + 1] === '\n') index++;
			lineStart = index + 1;
			const event = this.line(line);
			if (event) events.push(event);
		}
		this.pending = buffer.slice(lineStart);
		return events;
	}

	private line(line: string): ServerSentEvent | undefined {
		if (line === '') {
			const event =
				this.dataLines.length > 0
					? { event: this.eventName || 'message', data: this.dataLines.join('\n') }
					: undefined;
			this.eventName = '';
			this.dataLines = [];
			return event;
		}
		if (line.startsWith(':')) return undefined; // a comment (a keep-alive)
		const colon = line.indexOf(':');
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = colon === -1 ? '' : line.slice(colon + 1);
		if (value.startsWith(' ')) value = value.slice(1);
		if (field === 'event') this.eventName = value;
		else if (field === 'data') this.dataLines.push(value);
		return undefined;
	}
}
