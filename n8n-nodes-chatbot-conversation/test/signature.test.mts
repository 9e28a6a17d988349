import { randomBytes } from 'node:crypto';

import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
	TIMESTAMP_TOLERANCE_SECONDS,
	verifyWebhookSignature,
} from '../nodes/ChatbotConversationTrigger/WebhookSignature.ts';

const NOW = 1_795_000_000; // Unix seconds
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const SECRET = newSecret();
const OTHER_SECRET = newSecret();
const BODY = JSON.stringify({
	type: 'message.created',
	timestamp: '2026-11-21T12:00:00.000Z',
	data: { conversation_id: 'c1', message: { role: 'user', content: 'Grüße 👋' } },
});
const ID = 'evt_0123456789abcdefghijklmn';

/** Headers as the Standard Webhooks library signs them, for one or more secrets. */
function signed(
	secrets: string[],
	options: { id?: string; timestamp?: number; body?: string } = {},
): Record<string, string> {
	const id = options.id ?? ID;
	const timestamp = options.timestamp ?? NOW;
	const body = options.body ?? BODY;
	return {
		'webhook-id': id,
		'webhook-timestamp': String(timestamp),
		'webhook-signature': secrets
			.map((secret) => new Webhook(secret).sign(id, new Date(timestamp * 1000), body))
			.join(' '),
	};
}

/** Whether the Standard Webhooks library itself accepts the request (at NOW). */
function libraryAccepts(secret: string, headers: Record<string, string>, body: string): boolean {
	try {
		new Webhook(secret).verify(body, headers);
		return true;
	} catch {
		return false;
	}
}

describe('verifyWebhookSignature agrees with the standardwebhooks library', () => {
	beforeEach(() => {
		vi.useFakeTimers();
		vi.setSystemTime(NOW * 1000);
	});
	afterEach(() => {
		vi.useRealTimers();
	});

	const cases: { name: string; secret: string; headers: Record<string, string>; body: string }[] = [
		{ name: 'signed with the secret', secret: SECRET, headers: signed([SECRET]), body: BODY },
		{
			name: 'two signatures during a rotation, the matching one first',
			secret: SECRET,
			headers: signed([SECRET, OTHER_SECRET]),
			body: BODY,
		},
		{
			name: 'two signatures during a rotation, the matching one second',
			secret: SECRET,
			headers: signed([OTHER_SECRET, SECRET]),
			body: BODY,
		},
		{
			name: 'signed with another secret',
			secret: SECRET,
			headers: signed([OTHER_SECRET]),
			body: BODY,
		},
		{
			name: 'body changed after signing',
			secret: SECRET,
			headers: signed([SECRET]),
			body: BODY.replace('Grüße', 'Hello'),
		},
		{
			name: 'body re-serialized (same JSON, other bytes)',
			secret: SECRET,
			headers: signed([SECRET]),
			body: JSON.stringify(JSON.parse(BODY), null, 1),
		},
		{
			name: 'id changed after signing',
			secret: SECRET,
			headers: { ...signed([SECRET]), 'webhook-id': 'evt_another' },
			body: BODY,
		},
		{
			name: 'timestamp changed after signing',
			secret: SECRET,
			headers: { ...signed([SECRET]), 'webhook-timestamp': String(NOW - 1) },
			body: BODY,
		},
		{
			name: 'signed just inside the tolerance (old)',
			secret: SECRET,
			headers: signed([SECRET], { timestamp: NOW - TIMESTAMP_TOLERANCE_SECONDS }),
			body: BODY,
		},
		{
			name: 'signed just outside the tolerance (old): a replay',
			secret: SECRET,
			headers: signed([SECRET], { timestamp: NOW - TIMESTAMP_TOLERANCE_SECONDS - 1 }),
			body: BODY,
		},
		{
			name: 'signed just inside the tolerance (future)',
			secret: SECRET,
			headers: signed([SECRET], { timestamp: NOW + TIMESTAMP_TOLERANCE_SECONDS }),
			body: BODY,
		},
		{
			name: 'signed just outside the tolerance (future)',
			secret: SECRET,
			headers: signed([SECRET], { timestamp: NOW + TIMESTAMP_TOLERANCE_SECONDS + 1 }),
			body: BODY,
		},
		{
			name: 'a signature of another version only',
			secret: SECRET,
			headers: {
				...signed([SECRET]),
				'webhook-signature': signed([SECRET])['webhook-signature']!.replace('v1,', 'v2,'),
			},
			body: BODY,
		},
		{
			name: 'the signature truncated',
			secret: SECRET,
			headers: {
				...signed([SECRET]),
				'webhook-signature': signed([SECRET])['webhook-signature']!.slice(0, -4),
			},
			body: BODY,
		},
		{
			name: 'no webhook-signature header',
			secret: SECRET,
			headers: { 'webhook-id': ID, 'webhook-timestamp': String(NOW) },
			body: BODY,
		},
		{
			name: 'no webhook-id header',
			secret: SECRET,
			headers: {
				'webhook-timestamp': String(NOW),
				'webhook-signature': signed([SECRET])['webhook-signature']!,
			},
			body: BODY,
		},
		{ name: 'no headers at all', secret: SECRET, headers: {}, body: BODY },
		{
			name: 'an empty body, signed',
			secret: SECRET,
			headers: signed([SECRET], { body: '' }),
			body: '',
		},
		{
			name: 'a secret given without its whsec_ prefix',
			secret: SECRET.slice('whsec_'.length),
			headers: signed([SECRET]),
			body: BODY,
		},
	];

	it.each(cases)('$name', ({ secret, headers, body }) => {
		const ours = verifyWebhookSignature(secret, headers, Buffer.from(body, 'utf8'), NOW);
		expect(ours.valid).toBe(libraryAccepts(secret, headers, body));
	});

	it('covers both outcomes', () => {
		const outcomes = cases.map(({ secret, headers, body }) =>
			libraryAccepts(secret, headers, body),
		);
		expect(outcomes.filter(Boolean).length).toBeGreaterThanOrEqual(6);
		expect(outcomes.filter((accepted) => !accepted).length).toBeGreaterThanOrEqual(10);
	});
});

describe('verifyWebhookSignature', () => {
	it("answers the event's id when valid, and verifies the raw bytes (string or Buffer alike)", () => {
		expect(verifyWebhookSignature(SECRET, signed([SECRET]), BODY, NOW)).toEqual({
			valid: true,
			eventId: ID,
		});
		expect(verifyWebhookSignature(SECRET, signed([SECRET]), Buffer.from(BODY), NOW).valid).toBe(
			true,
		);
	});

	it('says why a request is refused', () => {
		const headers = signed([SECRET]);
		expect(verifyWebhookSignature(SECRET, {}, BODY, NOW)).toEqual({
			valid: false,
			reason: 'missing_headers',
		});
		expect(
			verifyWebhookSignature(SECRET, { ...headers, 'webhook-timestamp': '12e5' }, BODY, NOW),
		).toEqual({ valid: false, reason: 'invalid_timestamp' });
		expect(verifyWebhookSignature(SECRET, headers, BODY, NOW + 301)).toEqual({
			valid: false,
			reason: 'timestamp_out_of_tolerance',
		});
		expect(verifyWebhookSignature(OTHER_SECRET, headers, BODY, NOW)).toEqual({
			valid: false,
			reason: 'no_matching_signature',
		});
	});

	it('is stricter than the library where the library is lenient: a timestamp with trailing text', () => {
		const headers = { ...signed([SECRET]), 'webhook-timestamp': `${NOW}abc` };
		expect(verifyWebhookSignature(SECRET, headers, BODY, NOW).valid).toBe(false);
	});

	it('does not trust a header sent twice', () => {
		const headers = signed([SECRET]);
		const twice = { ...headers, 'webhook-signature': [headers['webhook-signature']!, 'v1,xyz'] };
		expect(verifyWebhookSignature(SECRET, twice, BODY, NOW)).toEqual({
			valid: false,
			reason: 'missing_headers',
		});
	});

	it('accepts a matching signature among several whatever else the header holds', () => {
		const headers = signed([SECRET]);
		const crowded = {
			...headers,
			'webhook-signature': `v1a,abc v1,${'A'.repeat(44)} garbage ${headers['webhook-signature']}`,
		};
		expect(verifyWebhookSignature(SECRET, crowded, BODY, NOW).valid).toBe(true);
	});

	it('refuses a signature whose base64 differs in spelling, though it decodes to the same bytes', () => {
		const headers = signed([SECRET]);
		const padded = { ...headers, 'webhook-signature': `${headers['webhook-signature']}!` };
		expect(verifyWebhookSignature(SECRET, padded, BODY, NOW).valid).toBe(false);
	});
});
