import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { INodeProperties, INodePropertyCollection, INodePropertyOptions } from 'n8n-workflow';
import { describe, expect, it } from 'vitest';

import { ChatbotConversationApi } from '../credentials/ChatbotConversationApi.credentials.ts';
import { ChatbotConversationManageApi } from '../credentials/ChatbotConversationManageApi.credentials.ts';
import { ChatbotConversation } from '../nodes/ChatbotConversation/ChatbotConversation.node.ts';
import { ChatbotConversationTrigger } from '../nodes/ChatbotConversationTrigger/ChatbotConversationTrigger.node.ts';
import packageJson from '../package.json' with { type: 'json' };

type Option = INodePropertyOptions | INodeProperties | INodePropertyCollection;

function isProperty(option: Option): option is INodeProperties {
	return 'type' in option && 'default' in option;
}

/** Every field, including the fields inside collections and fixed collections. */
function allFields(properties: INodeProperties[]): INodeProperties[] {
	return properties.flatMap((property) => {
		const nested = (property.options ?? []).flatMap((option: Option) => {
			if (isProperty(option)) return allFields([option]);
			if ('values' in option) return allFields(option.values);
			return [];
		});
		return [property, ...nested];
	});
}

describe('management credential', () => {
	const credential = new ChatbotConversationManageApi();

	it('holds a base URL and a password-type key, sent as a Bearer header', () => {
		expect(credential.name).toBe('chatbotConversationManageApi');
		expect(credential.properties.map((p) => p.name)).toEqual(['baseUrl', 'apiKey']);
		expect(credential.properties.find((p) => p.name === 'apiKey')?.typeOptions?.password).toBe(
			true,
		);
		expect(credential.authenticate).toEqual(new ChatbotConversationApi().authenticate);
	});

	it('is tested with GET /manage/me, which a key of scope chat fails', () => {
		expect(credential.test.request).toEqual({
			baseURL: '={{$credentials.baseUrl}}',
			url: '/manage/me',
			method: 'GET',
		});
		expect(credential.properties.find((p) => p.name === 'apiKey')?.description).toMatch(
			/scope "manage"/,
		);
	});
});

describe('credential', () => {
	const credential = new ChatbotConversationApi();

	it('holds a base URL, a password-type API key and an optional Stream URL', () => {
		expect(credential.name).toBe('chatbotConversationApi');
		expect(credential.properties.map((p) => p.name)).toEqual(['baseUrl', 'apiKey', 'streamUrl']);
		expect(credential.properties.find((p) => p.name === 'apiKey')?.typeOptions?.password).toBe(
			true,
		);
	});

	it('sends the key as a Bearer header', () => {
		expect(credential.authenticate).toEqual({
			type: 'generic',
			properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } },
		});
	});

	it("says where the key and the base URL come from: the console's Settings → API page", () => {
		const apiKey = credential.properties.find((p) => p.name === 'apiKey');
		const baseUrl = credential.properties.find((p) => p.name === 'baseUrl');
		expect(apiKey?.description).toMatch(/Settings → API/);
		expect(apiKey?.description).not.toMatch(/operator CLI/);
		expect(baseUrl?.description).toMatch(/Settings → API/);
	});

	it('is tested with GET /api/me (authenticated), not GET /ping (which accepts any key)', () => {
		expect(credential.test.request).toEqual({
			baseURL: '={{$credentials.baseUrl}}',
			url: '/api/me',
			method: 'GET',
		});
	});
});

describe('node description', () => {
	const { description } = new ChatbotConversation();

	it('is usable as a tool; Reply as Person alone takes the management credential (scope manage)', () => {
		expect(description.usableAsTool).toBe(true);
		expect(description.credentials).toEqual([
			{
				name: 'chatbotConversationApi',
				required: true,
				displayOptions: { hide: { operation: ['replyAsPerson'] } },
			},
			{
				name: 'chatbotConversationManageApi',
				required: true,
				displayOptions: { show: { operation: ['replyAsPerson'] } },
			},
		]);
	});

	it('offers the conversation operations a workflow needs, Message → Send and the feedback operations', () => {
		const operations = description.properties.filter((p) => p.name === 'operation');
		const byResource = Object.fromEntries(
			operations.map((p) => [
				String(p.displayOptions?.show?.resource?.[0]),
				(p.options ?? []).map((o) => ('value' in o ? o.value : undefined)),
			]),
		);
		expect(byResource).toEqual({
			conversation: [
				'close',
				'get',
				'getAll',
				'getMessages',
				'handOff',
				'rate',
				'replyAsPerson',
				'start',
			],
			message: ['giveFeedback', 'send'],
		});
	});

	it('describes every field (a tool-calling model reads these)', () => {
		const fields = allFields(description.properties).filter(
			(field) => !['resource', 'operation'].includes(field.name),
		);
		expect(fields.length).toBeGreaterThan(15);
		const undescribed = fields
			.filter((field) => !field.description?.trim())
			.map((field) => field.name);
		expect(undescribed).toEqual([]);
	});

	it('keeps the data-carrying fields open to expressions', () => {
		const fields = allFields(description.properties).filter((field) =>
			['chatbotId', 'conversationId', 'text', 'url', 'binaryPropertyName', 'limit'].includes(
				field.name,
			),
		);
		expect(fields.length).toBeGreaterThanOrEqual(6);
		expect(fields.filter((field) => field.noDataExpression)).toEqual([]);
	});
});

describe('package.json follows the community-node conventions', () => {
	it('registers the built nodes (the node and its trigger) and both credentials, API version 1, strict', () => {
		expect(packageJson.name).toMatch(/^n8n-nodes-/);
		expect(packageJson.keywords).toContain('n8n-community-node-package');
		expect(packageJson.n8n).toEqual({
			n8nNodesApiVersion: 1,
			strict: true,
			credentials: [
				'dist/credentials/ChatbotConversationApi.credentials.js',
				'dist/credentials/ChatbotConversationManageApi.credentials.js',
			],
			nodes: [
				'dist/nodes/ChatbotConversation/ChatbotConversation.node.js',
				'dist/nodes/ChatbotConversationTrigger/ChatbotConversationTrigger.node.js',
			],
		});
		expect(packageJson.files).toEqual(['dist']);
		expect(packageJson.peerDependencies).toEqual({ 'n8n-workflow': '*' });
		expect('dependencies' in packageJson).toBe(false);
	});
});

describe('publishing', () => {
	it('names no made-up repository in the source, its npm page as homepage, and the maintainers as author', () => {
		const text = JSON.stringify(packageJson);
		expect(text).not.toMatch(
			/example\.(com|org)|chatbot-conversation-api\/chatbot-conversation-api/,
		);
		// The package's page on npm shows its README (n8n's lint wants a homepage); the release
		// replaces it with the repository's folder.
		expect(packageJson.homepage).toBe(`https://www.npmjs.com/package/${packageJson.name}`);
		expect('repository' in packageJson).toBe(false);
		// n8n's lint (strict mode, as verification requires) wants an author with a name and an
		// e-mail: the maintainers, with the address this repository's commits are made under.
		expect(packageJson.author).toEqual({
			name: 'Chatbot Conversation API maintainers',
			email: 'maintainers@users.noreply.a-seed-69ff2e2a.example',
		});
	});

	it('is released naming the repository it is released from: repository, homepage and bugs', () => {
		const folder = mkdtempSync(join(tmpdir(), 'name-repository-'));
		const copy = join(folder, 'package.json');
		copyFileSync(new URL('../package.json', import.meta.url), copy);
		execFileSync(process.execPath, [
			fileURLToPath(new URL('../scripts/name-repository.mjs', import.meta.url)),
			'acme-shop/chatbot-api',
			copy,
		]);
		const released = JSON.parse(readFileSync(copy, 'utf8')) as Record<string, unknown>;
		expect(released).toMatchObject({
			repository: {
				type: 'git',
				url: 'git+https://github.com/acme-shop/chatbot-api.git',
				directory: 'n8n-nodes-chatbot-conversation',
			},
			homepage:
				'https://github.com/acme-shop/chatbot-api/tree/main/n8n-nodes-chatbot-conversation#readme',
			bugs: { url: 'https://github.com/acme-shop/chatbot-api/issues' },
		});
		// Everything else stays as it was.
		const { repository: _r, homepage: _h, bugs: _b, ...rest } = released;
		const { homepage: _source, ...unchanged } = packageJson;
		expect(rest).toEqual(unchanged);
		const workflow = readFileSync(
			new URL('../../.github/workflows/publish-n8n-node.yml', import.meta.url),
			'utf8',
		);
		expect(workflow).toContain('node scripts/name-repository.mjs "$GITHUB_REPOSITORY"');
		// The packed package goes onto the GitHub release: installable before it is on npm.
		expect(workflow).toMatch(/gh release upload "\$TAG" "\$tarball"/);
	});

	it('links its documentation to the package page on npm, which shows its README', () => {
		const page = `https://www.npmjs.com/package/${packageJson.name}`;
		expect(new ChatbotConversationApi().documentationUrl.startsWith(`${page}#`)).toBe(true);
	});

	it('releases with n8n-node: `npm run release`, and publishing only from the release flow', () => {
		expect(packageJson.scripts.release).toBe('n8n-node release');
		expect(packageJson.scripts.prepack).toBe('n8n-node build');
		expect(packageJson.scripts.prepublishOnly).toBe('node scripts/prepublish-only.mjs');
	});

	it('is published by a GitHub Actions workflow, on a tag, with npm provenance', () => {
		const workflow = readFileSync(
			new URL('../../.github/workflows/publish-n8n-node.yml', import.meta.url),
			'utf8',
		);
		expect(workflow).toMatch(/tags:\s*\n\s*- ['"]?n8n-nodes-chatbot-conversation-v/);
		expect(workflow).toContain('id-token: write');
		expect(workflow).toContain('npm publish --provenance --access public');
	});
});

describe('README', () => {
	const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

	it('speaks to n8n users: nothing about building or testing the package', () => {
		expect(readme).not.toMatch(
			/registry|lockfile|e2e|vitest|npm run (test|lint|build)|our machines/i,
		);
		expect(readme).not.toMatch(/^## Development/m);
	});

	it('promises no dashboard, and its links work on npmjs.com too (absolute or in-page)', () => {
		expect(readme).not.toMatch(/dashboard/i);
		expect(readme.match(/\]\((?!https:\/\/|#)[^)]*\)/g) ?? []).toEqual([]);
	});
});

/** Whether a field or credential shows for a node with these parameters (n8n's show/hide rules). */
function shownFor(
	displayOptions: INodeProperties['displayOptions'],
	parameters: Record<string, unknown>,
): boolean {
	const matches = (rules: Record<string, unknown> | undefined, hide: boolean) =>
		Object.entries(rules ?? {}).every(([name, values]) => {
			const admitted = (values as unknown[]).includes(parameters[name]);
			return hide ? !admitted : admitted;
		});
	return (
		matches(displayOptions?.show as Record<string, unknown>, false) &&
		matches(displayOptions?.hide as Record<string, unknown>, true)
	);
}

describe("README's example workflows", () => {
	const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
	const described = {
		'n8n-nodes-chatbot-conversation.chatbotConversation': new ChatbotConversation().description,
		'n8n-nodes-chatbot-conversation.chatbotConversationTrigger': new ChatbotConversationTrigger()
			.description,
	} as const;
	const workflows = [...readme.matchAll(/```json\n([\s\S]*?)```/g)]
		.map((block) => JSON.parse(block[1] ?? '') as { name?: string; nodes?: unknown[] })
		.filter((json) => Array.isArray(json.nodes));

	it('include the handoff to Slack and the answer back to the visitor', () => {
		const operations = workflows.flatMap((workflow) =>
			(workflow.nodes as { parameters?: { operation?: string } }[]).map(
				(node) => node.parameters?.operation,
			),
		);
		expect(workflows.map((workflow) => workflow.name)).toEqual(
			expect.arrayContaining(['Chatbot handoffs to Slack', 'Answer a chatbot visitor']),
		);
		expect(operations).toContain('replyAsPerson');
	});

	it("use only this package's parameters, options and credentials as they are named", () => {
		for (const workflow of workflows) {
			for (const node of workflow.nodes as {
				name: string;
				type: string;
				parameters: Record<string, unknown>;
				credentials?: Record<string, unknown>;
			}[]) {
				if (!node.type.startsWith('n8n-nodes-chatbot-conversation.')) continue;
				const description = described[node.type as keyof typeof described];
				const where = `${workflow.name} → ${node.name}`;
				expect(description, `${where}: no such node type ${node.type}`).toBeDefined();
				const parameters = { resource: 'conversation', ...node.parameters };
				const shown = description.properties.filter((field) =>
					shownFor(field.displayOptions, parameters),
				);
				for (const [name, value] of Object.entries(node.parameters)) {
					const field = shown.find((candidate) => candidate.name === name);
					expect(
						field,
						`${where}: parameter ${name} is not shown for these settings`,
					).toBeDefined();
					if (field?.type === 'options' && typeof value === 'string' && !value.startsWith('=')) {
						expect(
							(field.options as INodePropertyOptions[]).map((option) => option.value),
							`${where}: ${name}`,
						).toContain(value);
					}
					if (field?.type === 'multiOptions') {
						const allowed = (field.options as INodePropertyOptions[]).map((option) => option.value);
						for (const one of value as string[])
							expect(allowed, `${where}: ${name}`).toContain(one);
					}
				}
				const credentials = (description.credentials ?? []).filter((credential) =>
					shownFor(credential.displayOptions, parameters),
				);
				expect(Object.keys(node.credentials ?? {}), `${where}: credentials`).toEqual(
					credentials.map((credential) => credential.name),
				);
			}
		}
	});
});
