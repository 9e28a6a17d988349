import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';

/** One `event:`/`data:` block of a text/event-stream body. */
export function sse(event: string, data: unknown, newline = '\n'): string {
	return `event: ${event}${newline}data: ${JSON.stringify(data)}${newline}${newline}`;
}

/** How the fake answers one request. */
export type StreamAnswer =
	| { json: unknown; statusCode: number; headers?: Record<string, string> }
	| {
			/** The body, sent in pieces of `pieceSize` bytes (so events, lines and characters split). */
			events: string;
			pieceSize: number;
			/** Pieces held back until `release()` is called (the rest is sent at once after it). */
			holdAfterPiece?: number;
			/** The connection is cut (socket destroyed) after this many pieces. */
			cutAfterPiece?: number;
	  };

export interface StreamRequestSeen {
	method: string;
	url: string;
	headers: IncomingHttpHeaders;
	body: unknown;
}

export interface FakeStreamServer {
	/** The stream base URL, e.g. http://127.0.0.1:1234 */
	url: string;
	requests: StreamRequestSeen[];
	/** How many streamed answers the client closed before their end. */
	closedEarly(): number;
	/** Lets a held-back stream go on. */
	release(): void;
	close(): Promise<void>;
}

function tick(): Promise<void> {
	return new Promise((done) => setTimeout(done, 1));
}

async function drip(
	response: ServerResponse,
	answer: Extract<StreamAnswer, { events: string }>,
	held: Promise<void>,
	onClosedEarly: () => void,
): Promise<void> {
	response.on('close', () => {
		if (!response.writableEnded) onClosedEarly();
	});
	response.writeHead(200, {
		'content-type': 'text/event-stream; charset=utf-8',
		'cache-control': 'no-cache, no-store, no-transform',
	});
	response.flushHeaders();
	const bytes = Buffer.from(answer.events, 'utf8');
	let piece = 0;
	for (let offset = 0; offset < bytes.length; offset += answer.pieceSize) {
		if (answer.holdAfterPiece !== undefined && piece === answer.holdAfterPiece) await held;
		if (response.destroyed) return;
		if (answer.cutAfterPiece !== undefined && piece === answer.cutAfterPiece) {
			response.socket?.destroy();
			return;
		}
		response.write(bytes.subarray(offset, offset + answer.pieceSize));
		piece++;
		await tick();
	}
	response.end();
}

/**
 * A stand-in for the stream base URL: POST /api/message/stream answers the scripted answers in
 * order, with real bytes written piece by piece.
 */
export async function startFakeStreamServer(answers: StreamAnswer[]): Promise<FakeStreamServer> {
	const requests: StreamRequestSeen[] = [];
	const queue = [...answers];
	let closedEarly = 0;
	let release: () => void = () => {};
	const held = new Promise<void>((done) => (release = done));

	const server = createServer((request, response) => {
		const pieces: Buffer[] = [];
		request.on('data', (piece: Buffer) => pieces.push(piece));
		request.on('end', () => {
			const text = Buffer.concat(pieces).toString('utf8');
			requests.push({
				method: request.method ?? '',
				url: request.url ?? '',
				headers: request.headers,
				body: text === '' ? undefined : (JSON.parse(text) as unknown),
			});
			const answer = queue.shift();
			if (!answer || request.url !== '/api/message/stream') {
				response.writeHead(404, { 'content-type': 'application/json' });
				response.end('{"detail":"Not Found"}');
				return;
			}
			if ('json' in answer) {
				response.writeHead(answer.statusCode, {
					'content-type': 'application/json',
					...answer.headers,
				});
				response.end(JSON.stringify(answer.json));
				return;
			}
			void drip(response, answer, held, () => closedEarly++);
		});
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const address = server.address();
	const port = typeof address === 'object' && address ? address.port : 0;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		closedEarly: () => closedEarly,
		release: () => release(),
		close: () =>
			new Promise((done) => {
				server.closeAllConnections();
				server.close(() => done());
			}),
	};
}
