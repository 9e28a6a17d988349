import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verification of the API's webhook deliveries, signed per Standard Webhooks:
 *
 *   webhook-id:        the event's id (the same on every retry)
 *   webhook-timestamp: Unix seconds of this attempt
 *   webhook-signature: space-separated `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
 *                      one per secret that signs (two while a rotated secret's overlap lasts)
 *
 * The key is the base64 after `whsec_` of the endpoint's secret. Written with node:crypto alone,
 * as community nodes carry no runtime dependencies.
 */

/** How far a delivery's timestamp may be from n8n's clock, either way: bounds replays. */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

const SECRET_PREFIX = 'whsec_';

/** Request headers by lower-case name, as Node.js gives them. */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

export type VerificationFailure =
	| 'missing_headers'
	| 'invalid_timestamp'
	| 'timestamp_out_of_tolerance'
	| 'no_matching_signature';

export type Verification =
	| { valid: true; eventId: string }
	| { valid: false; reason: VerificationFailure };

/** One header's value; a header sent twice is not trusted. */
function single(value: string | string[] | undefined): string | undefined {
	if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
	return value;
}

function keyOf(secret: string): Buffer {
	const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
	return Buffer.from(encoded, 'base64');
}

/**
 * Whether `body` (the raw bytes as received) was signed with `secret` for this id and timestamp,
 * within the tolerance of `nowSeconds`. Every `v1` signature in the header is compared in constant
 * time; any one matching is enough (during a secret rotation the old and new secrets both sign).
 */
export function verifyWebhookSignature(
	secret: string,
	headers: WebhookHeaders,
	body: Buffer | string,
	nowSeconds: number,
	toleranceSeconds: number = TIMESTAMP_TOLERANCE_SECONDS,
): Verification {
	const id = single(headers['webhook-id']);
	const timestamp = single(headers['webhook-timestamp']);
	const signatures = single(headers['webhook-signature']);
	if (!id || !timestamp || !signatures) return { valid: false, reason: 'missing_headers' };
	if (!/^\d{1,15}$/.test(timestamp)) return { valid: false, reason: 'invalid_timestamp' };
	if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) {
		return { valid: false, reason: 'timestamp_out_of_tolerance' };
	}

	const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
	const expected = Buffer.from(
		createHmac('sha256', keyOf(secret))
			.update(`${id}.${timestamp}.`, 'utf8')
			.update(raw)
			.digest('base64'),
		'utf8',
	);

	let matched = false;
	for (const entry of signatures.split(' ')) {
		const comma = entry.indexOf(',');
		if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
		// The base64 text exactly as sent, so no lenient decoding can make two spellings equal.
		const given = Buffer.from(entry.slice(comma + 1), 'utf8');
		// Every candidate is compared (no early exit), each in constant time.
		if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
	}
	return matched ? { valid: true, eventId: id } : { valid: false, reason: 'no_matching_signature' };
}
