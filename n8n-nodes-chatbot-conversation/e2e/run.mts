/**
 * End-to-end run of the node in REAL n8n, headless (`npm run test:n8n` from the repository root).
 *
 *  1. installs the pinned n8n of e2e/package.json + package-lock.json with `npm ci` into
 *     e2e/.work/harness (only when the lockfile changed since the last install);
 *  2. starts the local runtime of the API (`npm start -- --ephemeral --port 0 --demo-file …`),
 *     unless CHATBOT_API_BASE_URL, CHATBOT_API_KEY and CHATBOT_ID name a running API;
 *  3. checks that `npm publish --dry-run` passes, packs the package with `npm pack` (prepack builds
 *     dist/) and installs that tarball into a fresh n8n user folder as README tells users to:
 *     `cd ~/.n8n/nodes && npm install --omit=peer <package>`;
 *  4. imports two credentials (the demo key and a wrong key) and e2e/workflow.json, runs the
 *     workflow with `n8n execute`, and checks every node's output; then e2e/operations-workflow.json
 *     with a management credential (a key of scope manage the demo's console admin makes): Start,
 *     Get, Hand Off, Reply as Person, Get Many, Close, each checked, and the person's reply in the
 *     API's history;
 *  5. runs e2e/agent-workflow.json: n8n's AI Agent, its OpenAI Chat Model pointed at a scripted
 *     Chat Completions server started here, and this node as the agent's tool. The model calls
 *     the tool, the tool sends the question to the API, the chatbot's answer goes back to the model;
 *  6. starts `n8n start` (WEBHOOK_URL on its own port, the one port of 127.0.0.1 the local API may
 *     deliver webhooks to) and runs the credential test of the real n8n UI for both credentials;
 *  7. in that n8n, a Webhook set to stream (Respond: Streaming) before Start Conversation and
 *     Send Message: the reply is streamed through n8n's response and equals the stored reply;
 *  8. in that n8n, the Chatbot Conversation Trigger: the management credential's test passes for a
 *     key of scope manage and fails for a chat key; a workflow with the trigger (a key of scope manage,
 *     made by the demo's console admin) is activated, which registers a webhook endpoint with the
 *     API; forged requests to its URL get 401 and start nothing; a message sent through the API
 *     starts the workflow with its events; deactivating removes the endpoint; a key of scope chat
 *     cannot activate it.
 * Any failed check exits with code 1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';

const e2eDir = import.meta.dirname;
const packageDir = resolve(e2eDir, '..');
const repoRoot = resolve(packageDir, '..');
const harnessDir = join(e2eDir, '.work', 'harness');
const keepFiles = process.env.E2E_KEEP === '1';

const CREDENTIAL_ID = 'chatbotE2eCred01';
const WRONG_CREDENTIAL_ID = 'chatbotE2eBadKey';
const WORKFLOW_ID = 'chatbotE2eWorkflow01';
const AGENT_WORKFLOW_ID = 'chatbotE2eAgentFlow01';
const OPERATIONS_WORKFLOW_ID = 'chatbotE2eOperations01';
const MANAGE_CREDENTIAL_ID = 'chatbotE2eManage01';
const CREDENTIAL_TYPE = 'chatbotConversationApi';
const MANAGE_CREDENTIAL_TYPE = 'chatbotConversationManageApi';
const PERSON_REPLY = 'Hi, Ada from Support here: your refund is on its way.';
const MODEL_CREDENTIAL_ID = 'chatbotE2eModel01';
/** What the scripted model has the agent ask the shop's chatbot (the demo knowledge answers it). */
const AGENT_QUESTION = 'What are your customer service opening hours?';
const NODE_TYPE = 'n8n-nodes-chatbot-conversation.chatbotConversation';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Api {
	baseUrl: string;
	apiKey: string;
	chatbotId: string;
	/** The stream base URL (POST /api/message/stream), when known. */
	streamUrl?: string;
	/** The demo's console admin, who can create a key of scope `manage` (local runtime only). */
	console?: { email: string; password: string; cognitoEndpoint: string; clientId: string };
}

interface DemoFile {
	baseUrl?: string;
	streamUrl?: string;
	apiKey?: string;
	chatbotId?: string;
	consoleEmail?: string;
	consolePassword?: string;
	cognito?: { endpoint?: string; clientId?: string };
}

interface RunResult {
	code: number | null;
	stdout: string;
	stderr: string;
}

const started = Date.now();
const failures: string[] = [];
let passed = 0;
const children = new Set<ChildProcess>();

function log(message: string): void {
	const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
	console.log(`[n8n e2e ${seconds}s] ${message}`);
}

function check(condition: boolean, what: string, detail?: unknown): void {
	if (condition) {
		passed++;
		log(`ok   ${what}`);
		return;
	}
	const shown =
		detail === undefined ? '' : `\n       got: ${JSON.stringify(detail)?.slice(0, 800)}`;
	log(`FAIL ${what}${shown}`);
	failures.push(what);
}

function isObject(value: Json | undefined): value is JsonObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Environment for child processes: Node 24 (the one running this script) first on PATH. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const path = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
	return { ...process.env, PATH: path, ...extra };
}

function run(
	command: string,
	args: string[],
	options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number; echo?: boolean },
): Promise<RunResult> {
	return new Promise((resolvePromise, reject) => {
		const child = spawn(command, args, {
			cwd: options.cwd,
			env: options.env ?? childEnv(),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		children.add(child);
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk: Buffer) => {
			stdout += chunk.toString();
			if (options.echo) process.stdout.write(chunk);
		});
		child.stderr.on('data', (chunk: Buffer) => {
			stderr += chunk.toString();
			if (options.echo) process.stderr.write(chunk);
		});
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			reject(new Error(`${command} ${args.join(' ')} took longer than ${options.timeoutMs} ms`));
		}, options.timeoutMs);
		child.on('error', reject);
		child.on('close', (code) => {
			clearTimeout(timer);
			children.delete(child);
			resolvePromise({ code, stdout, stderr });
		});
	});
}

function sleep(ms: number): Promise<void> {
	return new Promise((done) => setTimeout(done, ms));
}

function freePort(): Promise<number> {
	return new Promise((resolvePromise, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			const port = typeof address === 'object' && address ? address.port : 0;
			server.close(() => resolvePromise(port));
		});
	});
}

/* 1. the pinned n8n ------------------------------------------------------------------------ */

async function ensureHarness(): Promise<string> {
	const manifest = readFileSync(join(e2eDir, 'package.json'), 'utf8');
	const lock = readFileSync(join(e2eDir, 'package-lock.json'), 'utf8');
	const pinned = (JSON.parse(manifest) as { dependencies: Record<string, string> }).dependencies
		.n8n;
	const digest = createHash('sha256').update(manifest).update(lock).digest('hex');
	const marker = join(harnessDir, '.installed');
	const n8nBin = join(harnessDir, 'node_modules', 'n8n', 'bin', 'n8n');

	if (existsSync(n8nBin) && existsSync(marker) && readFileSync(marker, 'utf8') === digest) {
		log(`n8n ${pinned} already installed in ${harnessDir}`);
	} else {
		log(`installing n8n ${pinned} with npm ci into ${harnessDir} (a few minutes on a cold cache)`);
		rmSync(harnessDir, { recursive: true, force: true });
		mkdirSync(harnessDir, { recursive: true });
		writeFileSync(join(harnessDir, 'package.json'), manifest);
		writeFileSync(join(harnessDir, 'package-lock.json'), lock);
		const install = await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
			cwd: harnessDir,
			timeoutMs: 20 * 60_000,
			echo: true,
		});
		if (install.code !== 0)
			throw new Error(`npm ci of the n8n harness failed (exit ${install.code})`);
		writeFileSync(marker, digest);
		log('n8n installed');
	}

	const installed = (
		JSON.parse(readFileSync(join(harnessDir, 'node_modules', 'n8n', 'package.json'), 'utf8')) as {
			version: string;
		}
	).version;
	if (installed !== pinned) throw new Error(`harness has n8n ${installed}, expected ${pinned}`);
	return n8nBin;
}

/* 2. the API --------------------------------------------------------------------------------- */

/**
 * `allowPort` is n8n's port: the runtime may deliver webhooks to 127.0.0.1 on that port only
 * (OUTBOUND_ALLOW_PRIVATE; the API calls nothing else on this machine).
 */
async function startApi(
	workDir: string,
	allowPort: number,
): Promise<{ api: Api; stop: () => Promise<void> }> {
	const { CHATBOT_API_BASE_URL, CHATBOT_API_KEY, CHATBOT_ID } = process.env;
	if (CHATBOT_API_BASE_URL && CHATBOT_API_KEY && CHATBOT_ID) {
		log(`using the API at ${CHATBOT_API_BASE_URL} (CHATBOT_API_BASE_URL)`);
		const api: Api = {
			baseUrl: CHATBOT_API_BASE_URL,
			apiKey: CHATBOT_API_KEY,
			chatbotId: CHATBOT_ID,
		};
		if (process.env.CHATBOT_STREAM_URL) api.streamUrl = process.env.CHATBOT_STREAM_URL;
		return { api, stop: async () => {} };
	}

	const demoFile = join(workDir, 'demo.json');
	log('starting the local runtime: npm start -- --ephemeral --port 0 --demo-file …');
	const child = spawn(
		'npm',
		['start', '--', '--ephemeral', '--port', '0', '--demo-file', demoFile],
		{
			cwd: repoRoot,
			env: childEnv({ OUTBOUND_ALLOW_PRIVATE: `127.0.0.1:${allowPort}` }),
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true, // own process group, so stopping it stops DynamoDB Local too
		},
	);
	children.add(child);
	let output = '';
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	let exited = false;
	child.on('exit', () => {
		exited = true;
		children.delete(child);
	});

	const stop = async (): Promise<void> => {
		if (exited || child.pid === undefined) return;
		process.kill(-child.pid, 'SIGTERM');
		for (let i = 0; i < 100 && !exited; i++) await sleep(100);
		if (!exited) process.kill(-child.pid, 'SIGKILL');
	};

	const deadline = Date.now() + 180_000;
	while (Date.now() < deadline) {
		if (exited) throw new Error(`the local runtime exited before it was ready:\n${output}`);
		if (existsSync(demoFile)) {
			try {
				const demo = JSON.parse(readFileSync(demoFile, 'utf8')) as DemoFile;
				if (demo.baseUrl && demo.apiKey && demo.chatbotId) {
					log(`local runtime ready at ${demo.baseUrl}`);
					const api: Api = {
						baseUrl: demo.baseUrl,
						apiKey: demo.apiKey,
						chatbotId: demo.chatbotId,
					};
					if (demo.streamUrl) api.streamUrl = demo.streamUrl;
					if (
						demo.consoleEmail &&
						demo.consolePassword &&
						demo.cognito?.endpoint &&
						demo.cognito.clientId
					) {
						api.console = {
							email: demo.consoleEmail,
							password: demo.consolePassword,
							cognitoEndpoint: demo.cognito.endpoint,
							clientId: demo.cognito.clientId,
						};
					}
					return { api, stop };
				}
			} catch {
				// still being written
			}
		}
		await sleep(250);
	}
	await stop();
	throw new Error(`the local runtime did not write ${demoFile} within 180 s:\n${output}`);
}

/* 3–4. n8n execute ----------------------------------------------------------------------------- */

function n8nEnv(userFolder: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	return childEnv({
		N8N_USER_FOLDER: userFolder,
		N8N_ENCRYPTION_KEY: 'n8n-e2e-only-encryption-key',
		N8N_LOG_LEVEL: 'info', // `execute --rawOutput` prints the run through the logger
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_RUNNERS_BROKER_PORT: extra.N8N_RUNNERS_BROKER_PORT ?? '5679',
		...extra,
	});
}

/**
 * What a user gets: the package packed as `npm publish` would pack it (prepack builds dist/ from the
 * sources), installed from that tarball into n8n's community-nodes folder with README's command,
 * `cd ~/.n8n/nodes && npm install --omit=peer <package>`. n8n loads every n8n-nodes-* package there.
 */
async function installPackedPackage(userFolder: string, workDir: string): Promise<void> {
	const dryRun = await run('npm', ['publish', '--dry-run'], {
		cwd: packageDir,
		timeoutMs: 180_000,
	});
	check(
		dryRun.code === 0,
		'npm publish --dry-run passes (what a release would publish)',
		dryRun.stderr.slice(-2000),
	);

	const packDir = join(workDir, 'pack');
	mkdirSync(packDir, { recursive: true });
	const packed = await run('npm', ['pack', '--pack-destination', packDir], {
		cwd: packageDir,
		timeoutMs: 180_000,
	});
	const tarball = readdirSync(packDir).find((file) => file.endsWith('.tgz'));
	if (packed.code !== 0 || !tarball) {
		throw new Error(`npm pack failed (exit ${packed.code}):\n${packed.stdout}\n${packed.stderr}`);
	}
	const listed = await run('tar', ['-tzf', join(packDir, tarball)], {
		cwd: packDir,
		timeoutMs: 30_000,
	});
	const files = listed.stdout.split('\n').filter((line) => line !== '');
	const published = /^package\/(dist\/.+|package\.json|README\.md|LICENSE\.md)$/;
	check(
		files.includes('package/dist/nodes/ChatbotConversation/ChatbotConversation.node.js') &&
			files.includes(
				'package/dist/nodes/ChatbotConversationTrigger/ChatbotConversationTrigger.node.js',
			) &&
			files.every((file) => published.test(file)),
		'the tarball holds the built nodes, README, licence and package.json, and nothing else',
		files.filter((file) => !published.test(file)),
	);

	const nodesDir = join(userFolder, '.n8n', 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	// What n8n writes there at its first start; a user's first `npm install` there would create one too.
	writeFileSync(
		join(nodesDir, 'package.json'),
		JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }),
	);
	log(`installing ${tarball} into ${nodesDir}: npm install --omit=peer`);
	const install = await run(
		'npm',
		['install', '--omit=peer', '--no-audit', '--no-fund', join(packDir, tarball)],
		{ cwd: nodesDir, timeoutMs: 300_000 },
	);
	if (install.code !== 0) {
		throw new Error(`npm install of ${tarball} failed:\n${install.stdout}\n${install.stderr}`);
	}
	const installedDir = join(nodesDir, 'node_modules', 'n8n-nodes-chatbot-conversation');
	check(
		existsSync(
			join(installedDir, 'dist', 'credentials', 'ChatbotConversationApi.credentials.js'),
		) &&
			!existsSync(join(installedDir, 'nodes')) &&
			!existsSync(join(nodesDir, 'node_modules', 'n8n-workflow')),
		"the tarball installed as the only package: no sources, no second n8n-workflow (n8n's own is used)",
		readdirSync(join(nodesDir, 'node_modules')),
	);
}

/** The JSON document `n8n execute --rawOutput` prints after its log lines. */
function parseRunOutput(stdout: string): JsonObject {
	const lines = stdout.split('\n');
	for (let start = 0; start < lines.length; start++) {
		if (!lines[start]?.startsWith('{')) continue;
		for (let end = lines.length; end > start; end--) {
			try {
				const parsed = JSON.parse(lines.slice(start, end).join('\n')) as Json;
				if (isObject(parsed)) return parsed;
			} catch {
				// not this slice
			}
		}
	}
	throw new Error(`no JSON run data in the output of n8n execute:\n${stdout.slice(-4000)}`);
}

/** runData[node][0].data.main[0][*].json, or the node's error. */
function nodeOutput(run: JsonObject, node: string): { items: JsonObject[]; error?: Json } {
	const resultData = isObject(run.data) && isObject(run.data.resultData) ? run.data.resultData : {};
	const runData = isObject(resultData.runData) ? resultData.runData : {};
	const runs = runData[node];
	const first = Array.isArray(runs) ? runs[0] : undefined;
	if (!isObject(first)) return { items: [], error: `node "${node}" did not run` };
	const main =
		isObject(first.data) && Array.isArray(first.data.main) ? first.data.main[0] : undefined;
	const items = (Array.isArray(main) ? main : []).filter(isObject);
	return { items: items.map((item) => (isObject(item.json) ? item.json : {})), error: first.error };
}

function pairedItems(run: JsonObject, node: string): Json[] {
	const resultData = isObject(run.data) && isObject(run.data.resultData) ? run.data.resultData : {};
	const runData = isObject(resultData.runData) ? resultData.runData : {};
	const runs = runData[node];
	const first = Array.isArray(runs) ? runs[0] : undefined;
	const main =
		isObject(first) && isObject(first.data) && Array.isArray(first.data.main)
			? first.data.main[0]
			: [];
	return (Array.isArray(main) ? main : []).filter(isObject).map((item) => item.pairedItem ?? null);
}

async function importIntoN8n(
	n8nBin: string,
	env: NodeJS.ProcessEnv,
	what: 'credentials' | 'workflow',
	file: string,
): Promise<void> {
	const step = await run(process.execPath, [n8nBin, `import:${what}`, `--input=${file}`], {
		cwd: harnessDir,
		env,
		timeoutMs: 120_000,
	});
	if (step.code !== 0)
		throw new Error(`n8n import:${what} failed:\n${step.stdout}\n${step.stderr}`);
	log(`n8n import:${what} done (${basename(file)})`);
}

/** Runs an imported workflow headless (`n8n execute`) and returns its run data. */
async function executeInN8n(
	n8nBin: string,
	env: NodeJS.ProcessEnv,
	workflowId: string,
): Promise<JsonObject> {
	const step = await run(
		process.execPath,
		[n8nBin, 'execute', `--id=${workflowId}`, '--rawOutput'],
		{
			cwd: harnessDir,
			env,
			timeoutMs: 180_000,
		},
	);
	log(`n8n execute ${workflowId} exited with ${step.code}`);
	if (step.code !== 0) {
		throw new Error(
			`n8n execute ${workflowId} failed (exit ${step.code}):\n${step.stdout.slice(-6000)}\n${step.stderr.slice(-6000)}`,
		);
	}
	return parseRunOutput(step.stdout);
}

async function executeWorkflow(n8nBin: string, userFolder: string, api: Api): Promise<void> {
	const env = n8nEnv(userFolder);
	const credentials = [
		{
			id: CREDENTIAL_ID,
			name: 'Chatbot E2E',
			type: 'chatbotConversationApi',
			// with a Stream URL: `n8n execute` does not stream, so the node still calls POST /api/message
			data: { baseUrl: api.baseUrl, apiKey: api.apiKey, streamUrl: api.streamUrl ?? '' },
		},
		{
			id: WRONG_CREDENTIAL_ID,
			name: 'Chatbot E2E (wrong key)',
			type: 'chatbotConversationApi',
			data: { baseUrl: api.baseUrl, apiKey: 'cbk_this_key_does_not_exist' },
		},
	];
	const credentialsFile = join(userFolder, 'credentials.json');
	writeFileSync(credentialsFile, JSON.stringify(credentials));
	const workflowFile = join(userFolder, 'workflow.json');
	writeFileSync(
		workflowFile,
		readFileSync(join(e2eDir, 'workflow.json'), 'utf8').replaceAll('__CHATBOT_ID__', api.chatbotId),
	);

	await importIntoN8n(n8nBin, env, 'credentials', credentialsFile);
	await importIntoN8n(n8nBin, env, 'workflow', workflowFile);
	const result = await executeInN8n(n8nBin, env, WORKFLOW_ID);
	if (keepFiles) writeFileSync(join(userFolder, 'run.json'), JSON.stringify(result, null, 2));

	check(
		result.status === 'success' || result.finished === true,
		'the workflow run succeeded',
		result.status,
	);

	const start = nodeOutput(result, 'Start Conversation');
	const conversationId = start.items[0]?.conversation_id;
	const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
	check(
		start.items.length === 1 && typeof conversationId === 'string' && uuid.test(conversationId),
		'Start Conversation outputs a conversation_id',
		start,
	);
	check(
		typeof start.items[0]?.contact_id === 'string',
		'Start Conversation outputs a contact_id',
		start.items[0],
	);

	const send = nodeOutput(result, 'Send Message');
	check(send.items.length >= 1, 'Send Message outputs at least one reply message', send);
	check(
		send.items.every(
			(item) =>
				item.role === 'assistant' &&
				typeof item.content === 'string' &&
				item.content.trim() !== '' &&
				item.conversation_id === conversationId,
		),
		'every reply is a non-empty assistant message of this conversation',
		send.items,
	);
	check(
		JSON.stringify(pairedItems(result, 'Send Message')).includes('"item":0'),
		'Send Message sets pairedItem',
		pairedItems(result, 'Send Message'),
	);

	const history = nodeOutput(result, 'Get Messages');
	check(
		history.items.some((item) => item.role === 'user' && item.content === 'Hello') &&
			history.items.some((item) => item.role === 'assistant'),
		"Get Messages returns the visitor's message and the chatbot's reply",
		history.items,
	);

	const picture = nodeOutput(result, 'Send Picture');
	const pictureReply = picture.items[0];
	check(
		picture.items.length === 1 &&
			Array.isArray(pictureReply?.messages) &&
			pictureReply.messages.length >= 1 &&
			typeof pictureReply.reply === 'string' &&
			pictureReply.reply.trim() !== '',
		'Send Picture (binary image attachment, single-item output) gets a reply',
		picture,
	);

	const afterPicture = nodeOutput(result, 'History After Picture');
	const pictureMessage = afterPicture.items.find(
		(item) => item.role === 'user' && item.content === 'What do you see in this picture?',
	);
	const stored = Array.isArray(pictureMessage?.attachments) ? pictureMessage.attachments : [];
	check(
		stored.length === 1 && isObject(stored[0]) && stored[0].type === 'image',
		'the picture reached the API as an image attachment of the visitor message',
		afterPicture.items,
	);

	const unknown = nodeOutput(result, 'Unknown Conversation');
	check(
		unknown.items[0]?.error === 'Conversation not found' && unknown.items[0]?.httpCode === '404',
		'an unknown conversation gives the API detail as an error item (continue on fail)',
		unknown,
	);

	const wrongKey = nodeOutput(result, 'Wrong Key');
	check(
		wrongKey.items[0]?.error === 'Invalid API key' && wrongKey.items[0]?.httpCode === '401',
		'a wrong API key gives "Invalid API key" (401)',
		wrongKey,
	);
}

/* 4b. the conversation operations, a person's reply with the management credential ------------ */

async function conversationOperations(n8nBin: string, userFolder: string, api: Api): Promise<void> {
	if (!api.console) {
		log(
			'skipping Reply as Person and the other operations: they need a key of scope manage (local runtime)',
		);
		return;
	}
	const env = n8nEnv(userFolder);
	const manageKey = await createManageKey(api);
	const credentialsFile = join(userFolder, 'manage-credentials.json');
	writeFileSync(
		credentialsFile,
		JSON.stringify([
			{
				id: MANAGE_CREDENTIAL_ID,
				name: 'Chatbot E2E (manage key)',
				type: MANAGE_CREDENTIAL_TYPE,
				data: { baseUrl: api.baseUrl, apiKey: manageKey },
			},
		]),
	);
	const externalId = `n8n-e2e-operations-${randomUUID().slice(0, 8)}`;
	const workflowFile = join(userFolder, 'operations-workflow.json');
	writeFileSync(
		workflowFile,
		readFileSync(join(e2eDir, 'operations-workflow.json'), 'utf8')
			.replaceAll('__CHATBOT_ID__', api.chatbotId)
			.replaceAll('__EXTERNAL_ID__', externalId),
	);
	await importIntoN8n(n8nBin, env, 'credentials', credentialsFile);
	await importIntoN8n(n8nBin, env, 'workflow', workflowFile);
	const result = await executeInN8n(n8nBin, env, OPERATIONS_WORKFLOW_ID);
	if (keepFiles)
		writeFileSync(join(userFolder, 'operations-run.json'), JSON.stringify(result, null, 2));
	check(
		result.status === 'success' || result.finished === true,
		'the operations workflow run succeeded',
		result.status,
	);

	const conversationId = nodeOutput(result, 'Start Conversation').items[0]?.conversation_id;
	const got = nodeOutput(result, 'Get Conversation').items;
	check(
		got.length === 1 &&
			got[0]?.conversation_id === conversationId &&
			got[0]?.status === 'open' &&
			got[0]?.chatbot_id === api.chatbotId &&
			got[0]?.external_id === externalId,
		'Conversation → Get outputs the conversation, open',
		got,
	);
	const handedOff = nodeOutput(result, 'Hand Off').items;
	check(
		handedOff.length === 1 && handedOff[0]?.status === 'handoff',
		'Conversation → Hand Off hands it to a person (status handoff)',
		handedOff,
	);
	const reply = nodeOutput(result, 'Reply as Person').items;
	check(
		reply.length === 1 &&
			reply[0]?.conversation_id === conversationId &&
			reply[0]?.role === 'agent' &&
			reply[0]?.content === PERSON_REPLY &&
			reply[0]?.agent_name === 'Ada from Support' &&
			reply[0]?.status === 'handoff',
		'Conversation → Reply as Person (management credential) sends the reply as role agent under the display name',
		reply,
	);
	const many = nodeOutput(result, 'Get Many').items;
	check(
		many.length === 1 &&
			many[0]?.conversation_id === conversationId &&
			many[0]?.status === 'handoff',
		'Conversation → Get Many with filters (external id, status handoff) finds exactly this conversation',
		many,
	);
	const closed = nodeOutput(result, 'Close').items;
	check(
		closed.length === 1 &&
			closed[0]?.conversation_id === conversationId &&
			closed[0]?.status === 'closed',
		'Conversation → Close closes it',
		closed,
	);
	const history = await storedMessages(api, String(conversationId));
	check(
		history.some(
			(message) =>
				message.role === 'agent' &&
				message.content === PERSON_REPLY &&
				message.agent_name === 'Ada from Support',
		),
		"the person's reply is in the conversation's history as the visitor's chat shows it",
		history,
	);
}

/* 5. the node as an AI Agent tool ------------------------------------------------------------ */

interface ScriptedModel {
	url: string;
	requests: JsonObject[];
	close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<Json> {
	const chunks: Buffer[] = [];
	for await (const chunk of request) chunks.push(chunk as Buffer);
	return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
}

/**
 * An OpenAI Chat Completions server with a script: while no tool result is in the conversation it
 * calls the first tool it was offered with AGENT_QUESTION; then it answers with the tool's result.
 */
async function startScriptedModel(): Promise<ScriptedModel> {
	const requests: JsonObject[] = [];
	const server = createHttpServer((request, response) => {
		void readJson(request).then(
			(body) => {
				const chat = isObject(body) ? body : {};
				requests.push(chat);
				const messages = (Array.isArray(chat.messages) ? chat.messages : []).filter(isObject);
				const toolResult = messages.find((message) => message.role === 'tool');
				const tools = (Array.isArray(chat.tools) ? chat.tools : []).filter(isObject);
				const toolName =
					isObject(tools[0]?.function) && typeof tools[0].function.name === 'string'
						? tools[0].function.name
						: 'no_tool_offered';
				const message = toolResult
					? { role: 'assistant', content: `The shop's chatbot says: ${String(toolResult.content)}` }
					: {
							role: 'assistant',
							content: null,
							tool_calls: [
								{
									id: 'call_e2e_1',
									type: 'function',
									function: {
										name: toolName,
										arguments: JSON.stringify({ question: AGENT_QUESTION }),
									},
								},
							],
						};
				response.writeHead(200, { 'content-type': 'application/json' });
				response.end(
					JSON.stringify({
						id: `chatcmpl-e2e-${requests.length}`,
						object: 'chat.completion',
						created: Math.floor(Date.now() / 1000),
						model: chat.model ?? 'e2e-scripted-model',
						choices: [{ index: 0, message, finish_reason: toolResult ? 'stop' : 'tool_calls' }],
						usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
					}),
				);
			},
			() => {
				response.writeHead(400, { 'content-type': 'application/json' });
				response.end('{"error":{"message":"not JSON"}}');
			},
		);
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const address = server.address();
	const port = typeof address === 'object' && address ? address.port : 0;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () => new Promise((done) => server.close(() => done())),
	};
}

async function agentUsesTheNode(n8nBin: string, userFolder: string, api: Api): Promise<void> {
	const model = await startScriptedModel();
	try {
		const env = n8nEnv(userFolder);
		const started = await fetch(`${api.baseUrl}/api/conversation`, {
			method: 'POST',
			headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
			body: JSON.stringify({ chatbot_id: api.chatbotId }),
		});
		const conversation = (await started.json()) as Json;
		const conversationId = isObject(conversation) ? String(conversation.conversation_id) : '';

		const credentialsFile = join(userFolder, 'model-credentials.json');
		writeFileSync(
			credentialsFile,
			JSON.stringify([
				{
					id: MODEL_CREDENTIAL_ID,
					name: 'Scripted model',
					type: 'openAiApi',
					data: { apiKey: 'sk-e2e-only', url: model.url },
				},
			]),
		);
		const workflowFile = join(userFolder, 'agent-workflow.json');
		writeFileSync(
			workflowFile,
			readFileSync(join(e2eDir, 'agent-workflow.json'), 'utf8').replaceAll(
				'__CONVERSATION_ID__',
				conversationId,
			),
		);
		await importIntoN8n(n8nBin, env, 'credentials', credentialsFile);
		await importIntoN8n(n8nBin, env, 'workflow', workflowFile);
		const result = await executeInN8n(n8nBin, env, AGENT_WORKFLOW_ID);
		if (keepFiles)
			writeFileSync(join(userFolder, 'agent-run.json'), JSON.stringify(result, null, 2));

		const offered = (Array.isArray(model.requests[0]?.tools) ? model.requests[0].tools : []).filter(
			isObject,
		);
		const parameters = isObject(offered[0]?.function) ? offered[0].function.parameters : undefined;
		check(
			offered.length === 1 &&
				isObject(parameters) &&
				isObject(parameters.properties) &&
				'question' in parameters.properties,
			"the AI Agent offers the node to the model as a tool, with the $fromAI parameter 'question'",
			offered,
		);

		const messages = await storedMessages(api, conversationId);
		const answer = messages.find((message) => message.role === 'assistant');
		check(
			messages.some((message) => message.role === 'user' && message.content === AGENT_QUESTION) &&
				typeof answer?.content === 'string',
			"the model's tool call reached the API as the visitor's message, and the chatbot answered",
			messages,
		);

		const toolMessage = (
			Array.isArray(model.requests[1]?.messages) ? model.requests[1].messages : []
		)
			.filter(isObject)
			.find((message) => message.role === 'tool');
		const chatbotAnswer = typeof answer?.content === 'string' ? answer.content : '<no answer>';
		check(
			typeof toolMessage?.content === 'string' &&
				toolMessage.content.includes(chatbotAnswer.slice(0, 40)),
			"the chatbot's answer went back to the model as the tool's result",
			toolMessage,
		);

		const agent = nodeOutput(result, 'AI Agent');
		const output = agent.items[0]?.output;
		check(
			typeof output === 'string' &&
				output.startsWith("The shop's chatbot says:") &&
				output.includes(chatbotAnswer.slice(0, 40)),
			"the AI Agent's output is the model's final answer built on the tool result",
			agent,
		);
	} finally {
		await model.close();
	}
}

/* 6. n8n start: the credential test of the n8n UI ----------------------------------------- */

interface N8nServer {
	/** Where n8n serves its UI and REST API, and (WEBHOOK_URL) its webhooks. */
	base: string;
	/** The owner's session cookie for /rest/*. */
	cookie: string;
	userFolder: string;
}

/**
 * Runs `n8n start` on `port` (webhooks announced at http://127.0.0.1:<port>/, which the local API
 * may call), sets up the owner, hands the server to `use`, and stops it.
 */
async function withN8nServer(
	n8nBin: string,
	userFolder: string,
	port: number,
	use: (server: N8nServer) => Promise<void>,
): Promise<void> {
	const brokerPort = await freePort();
	const base = `http://127.0.0.1:${port}`;
	const env = n8nEnv(userFolder, {
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		WEBHOOK_URL: `${base}/`,
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_SECURE_COOKIE: 'false',
		N8N_LOG_LEVEL: 'warn',
	});
	const server = spawn(process.execPath, [n8nBin, 'start'], {
		cwd: harnessDir,
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	children.add(server);
	let output = '';
	server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
	server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
	let exited = false;
	server.on('exit', () => {
		exited = true;
		children.delete(server);
	});

	try {
		const deadline = Date.now() + 120_000;
		let ready = false;
		while (!ready && Date.now() < deadline) {
			if (exited) throw new Error(`n8n start exited:\n${output}`);
			try {
				// not /rest/settings: during migrations n8n answers every path with 200 "n8n is
				// starting up"; readiness turns 200 only after all REST controllers are registered
				ready = (await fetch(`${base}/healthz/readiness`)).status === 200;
			} catch {
				// not listening yet
			}
			if (!ready) await sleep(250);
		}
		if (!ready) throw new Error(`n8n start was not ready within 120 s:\n${output}`);
		log(`n8n start is serving ${base}`);

		const setup = await fetch(`${base}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({
				email: 'e2e@example.com',
				firstName: 'End',
				lastName: 'ToEnd',
				password: 'E2e-only-Password-1',
			}),
		});
		const cookie = (setup.headers.getSetCookie?.() ?? [])
			.map((value) => value.split(';')[0])
			.join('; ');
		if (!setup.ok || !cookie)
			throw new Error(`owner setup failed: ${setup.status} ${await setup.text()}`);

		await use({ base, cookie, userFolder });
	} catch (error) {
		if (keepFiles) log(`n8n start output:\n${output.slice(-6000)}`);
		throw error;
	} finally {
		if (!exited) {
			server.kill('SIGTERM');
			for (let i = 0; i < 100 && !exited; i++) await sleep(100);
			if (!exited) server.kill('SIGKILL');
		}
	}
}

/** One call to n8n's own REST API, as the UI makes it; answers the status and the `data` it holds. */
async function n8nRest(
	server: N8nServer,
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; data: Json; body: Json }> {
	const response = await fetch(`${server.base}${path}`, {
		method,
		headers: { 'content-type': 'application/json', cookie: server.cookie },
		...(body === undefined ? {} : { body: JSON.stringify(body) }),
	});
	const text = await response.text();
	let parsed: Json = text;
	try {
		parsed = JSON.parse(text) as Json;
	} catch {
		// not JSON: keep the text
	}
	const data = isObject(parsed) && 'data' in parsed ? (parsed.data ?? null) : null;
	return { status: response.status, data, body: parsed };
}

/** The credential test of the n8n UI (the credential's `test` request) for one key. */
async function testCredential(
	server: N8nServer,
	api: Api,
	apiKey: string,
	type: string = CREDENTIAL_TYPE,
): Promise<JsonObject> {
	const { data, body } = await n8nRest(server, 'POST', '/rest/credentials/test', {
		credentials: {
			name: 'Chatbot credential test',
			type,
			data: { baseUrl: api.baseUrl, apiKey },
		},
	});
	return isObject(data) ? data : { unexpected: body };
}

async function credentialTest(server: N8nServer, api: Api): Promise<void> {
	const good = await testCredential(server, api, api.apiKey);
	check(good.status === 'OK', 'the credential test passes for the demo key (GET /api/me)', good);
	const bad = await testCredential(server, api, 'cbk_this_key_does_not_exist');
	check(bad.status === 'Error', 'the credential test fails for a wrong key', bad);

	// n8n derives an AI-Agent tool from every node with usableAsTool
	const typesFile = join(server.userFolder, '.cache', 'n8n', 'public', 'types', 'nodes.json');
	const types = existsSync(typesFile) ? (JSON.parse(readFileSync(typesFile, 'utf8')) as Json) : [];
	const tool = (Array.isArray(types) ? types : [])
		.filter(isObject)
		.find((type) => type.name === `${NODE_TYPE}Tool`);
	check(
		Array.isArray(tool?.outputs) && tool.outputs.includes('ai_tool'),
		'n8n offers the node as a tool for the AI Agent (Chatbot Conversation Tool, ai_tool output)',
		tool?.outputs ?? `no ${NODE_TYPE}Tool in ${typesFile}`,
	);
}

/* 8. the trigger in a running n8n ------------------------------------------------------------ */

const TRIGGER_EVENTS = ['message.created', 'conversation.created'];
const TRIGGER_MESSAGE = 'Hello from the n8n trigger end-to-end run';
const FORGED_MESSAGE = 'This delivery is forged';

interface Sink {
	url: string;
	/** The JSON bodies POSTed to the sink, in arrival order: one per workflow run. */
	received: JsonObject[];
	close(): Promise<void>;
}

/** Where the trigger workflow's last node reports each event it was started with. */
async function startSink(): Promise<Sink> {
	const received: JsonObject[] = [];
	const server = createHttpServer((request, response) => {
		void readJson(request).then(
			(body) => {
				if (isObject(body)) received.push(body);
				response.writeHead(204).end();
			},
			() => response.writeHead(400).end(),
		);
	});
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const address = server.address();
	const port = typeof address === 'object' && address ? address.port : 0;
	return {
		url: `http://127.0.0.1:${port}/events`,
		received,
		close: () => new Promise((done) => server.close(() => done())),
	};
}

/**
 * A key of scope `manage` for the demo organization, made as a person would make it: the demo's
 * console admin signs in (Cognito's USER_PASSWORD_AUTH) and creates it with POST /manage/api-keys.
 */
async function createManageKey(api: Api): Promise<string> {
	const person = api.console;
	if (!person) throw new Error('the demo file names no console admin');
	const signIn = await fetch(person.cognitoEndpoint, {
		method: 'POST',
		headers: {
			'content-type': 'application/x-amz-json-1.1',
			'x-amz-target': 'AWSCognitoIdentityProviderService.InitiateAuth',
		},
		body: JSON.stringify({
			AuthFlow: 'USER_PASSWORD_AUTH',
			ClientId: person.clientId,
			AuthParameters: { USERNAME: person.email, PASSWORD: person.password },
		}),
	});
	const tokens = (await signIn.json()) as Json;
	const result = isObject(tokens) ? tokens.AuthenticationResult : undefined;
	const accessToken = isObject(result) ? result.AccessToken : undefined;
	if (typeof accessToken !== 'string') {
		throw new Error(`the console admin could not sign in: ${JSON.stringify(tokens)}`);
	}
	const created = await fetch(`${api.baseUrl}/manage/api-keys`, {
		method: 'POST',
		headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
		body: JSON.stringify({ name: 'n8n trigger (e2e)', scope: 'manage' }),
	});
	const key = (await created.json()) as Json;
	if (created.status !== 201 || !isObject(key) || typeof key.key !== 'string') {
		throw new Error(`creating a manage key failed: ${created.status} ${JSON.stringify(key)}`);
	}
	return key.key;
}

async function listEndpoints(api: Api, manageKey: string): Promise<JsonObject[]> {
	const response = await fetch(`${api.baseUrl}/manage/webhook-endpoints`, {
		headers: { authorization: `Bearer ${manageKey}` },
	});
	const body = (await response.json()) as Json;
	if (response.status !== 200 || !isObject(body) || !Array.isArray(body.webhook_endpoints)) {
		throw new Error(`listing webhook endpoints failed: ${response.status} ${JSON.stringify(body)}`);
	}
	return body.webhook_endpoints.filter(isObject);
}

async function apiPost(api: Api, path: string, body: JsonObject): Promise<JsonObject> {
	const response = await fetch(`${api.baseUrl}${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	const answer = (await response.json()) as Json;
	if (!response.ok || !isObject(answer)) {
		throw new Error(`POST ${path} failed: ${response.status} ${JSON.stringify(answer)}`);
	}
	return answer;
}

/** A conversation's stored messages, oldest first (its first 100), as the public API lists them. */
async function storedMessages(api: Api, conversationId: string): Promise<JsonObject[]> {
	const response = await fetch(
		`${api.baseUrl}/api/conversation/${conversationId}/messages?limit=100`,
		{ headers: { authorization: `Bearer ${api.apiKey}` } },
	);
	const page = (await response.json()) as Json;
	return (isObject(page) && Array.isArray(page.messages) ? page.messages : []).filter(isObject);
}

/** Creates the trigger workflow in n8n (as the editor saves it) with the given credential. */
async function createTriggerWorkflow(
	server: N8nServer,
	options: { name: string; webhookId: string; credential: JsonObject; sinkUrl: string },
): Promise<{ id: string; versionId: string }> {
	const workflow = JSON.parse(
		readFileSync(join(e2eDir, 'trigger-workflow.json'), 'utf8')
			.replaceAll('__WEBHOOK_ID__', options.webhookId)
			.replaceAll('__CREDENTIAL_ID__', String(options.credential.id))
			.replaceAll('__CREDENTIAL_NAME__', String(options.credential.name))
			.replaceAll('__SINK_URL__', options.sinkUrl),
	) as JsonObject;
	const created = await n8nRest(server, 'POST', '/rest/workflows', {
		...workflow,
		name: options.name,
	});
	const { data } = created;
	if (!isObject(data) || typeof data.id !== 'string' || typeof data.versionId !== 'string') {
		throw new Error(
			`creating the workflow failed: ${created.status} ${JSON.stringify(created.body)}`,
		);
	}
	return { id: data.id, versionId: data.versionId };
}

async function createCredential(
	server: N8nServer,
	name: string,
	data: { baseUrl: string; apiKey: string; streamUrl?: string },
	type: string = CREDENTIAL_TYPE,
): Promise<JsonObject> {
	const created = await n8nRest(server, 'POST', '/rest/credentials', {
		name,
		type,
		data,
	});
	if (!isObject(created.data) || typeof created.data.id !== 'string') {
		throw new Error(
			`creating a credential failed: ${created.status} ${JSON.stringify(created.body)}`,
		);
	}
	return created.data;
}

/** The executions n8n recorded for a workflow: `{id, status}` each. */
async function executionsOf(server: N8nServer, workflowId: string): Promise<JsonObject[]> {
	const filter = encodeURIComponent(JSON.stringify({ workflowId }));
	const listed = await n8nRest(server, 'GET', `/rest/executions?filter=${filter}&limit=100`);
	const results = isObject(listed.data) ? listed.data.results : undefined;
	if (!Array.isArray(results)) {
		throw new Error(`listing executions failed: ${listed.status} ${JSON.stringify(listed.body)}`);
	}
	return results.filter(isObject);
}

async function waitFor<T>(
	what: string,
	timeoutMs: number,
	probe: () => Promise<T | undefined> | T | undefined,
): Promise<T | undefined> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		const value = await probe();
		if (value !== undefined) return value;
		await sleep(250);
	}
	log(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
	return undefined;
}

/** A request signed like a delivery (Standard Webhooks) with a secret the endpoint does not have. */
function forgedDelivery(body: string): Record<string, string> {
	const id = `evt_forged${Date.now()}`;
	const timestamp = String(Math.floor(Date.now() / 1000));
	const secret = randomBytes(32);
	const signature = createHmac('sha256', secret)
		.update(`${id}.${timestamp}.${body}`)
		.digest('base64');
	return {
		'content-type': 'application/json',
		'webhook-id': id,
		'webhook-timestamp': timestamp,
		'webhook-signature': `v1,${signature}`,
	};
}

async function triggerStartsWorkflows(server: N8nServer, api: Api): Promise<void> {
	if (!api.console) {
		log(
			'skipping the trigger: it needs the local runtime (a manage key, and an API that can reach n8n)',
		);
		return;
	}
	const manageKey = await createManageKey(api);
	const tested = await testCredential(server, api, manageKey);
	check(tested.status === 'OK', 'the credential test passes for a key of scope manage too', tested);
	const manageTested = await testCredential(server, api, manageKey, MANAGE_CREDENTIAL_TYPE);
	check(
		manageTested.status === 'OK',
		'the management credential test passes for a key of scope manage (GET /manage/me)',
		manageTested,
	);
	const chatTested = await testCredential(server, api, api.apiKey, MANAGE_CREDENTIAL_TYPE);
	check(
		chatTested.status === 'Error',
		'the management credential test fails for a key of scope chat',
		chatTested,
	);
	const sink = await startSink();
	try {
		const credential = await createCredential(
			server,
			'Chatbot (manage key)',
			{ baseUrl: api.baseUrl, apiKey: manageKey },
			MANAGE_CREDENTIAL_TYPE,
		);
		const webhookId = randomUUID();
		const workflow = await createTriggerWorkflow(server, {
			name: 'Chatbot trigger e2e',
			webhookId,
			credential,
			sinkUrl: sink.url,
		});
		const webhookUrl = `${server.base}/webhook/${webhookId}/webhook`;

		const activated = await n8nRest(server, 'POST', `/rest/workflows/${workflow.id}/activate`, {
			versionId: workflow.versionId,
		});
		check(activated.status === 200, 'the trigger workflow activates', activated.body);
		const registered = (await listEndpoints(api, manageKey)).filter(
			(endpoint) => endpoint.url === webhookUrl,
		);
		check(
			registered.length === 1 &&
				JSON.stringify(registered[0]?.events) === JSON.stringify(TRIGGER_EVENTS) &&
				registered[0]?.enabled === true,
			"activating registered one webhook endpoint with n8n's URL and the chosen events",
			{ webhookUrl, endpoints: await listEndpoints(api, manageKey) },
		);

		// Forged requests first: had one started the workflow, the sink would hold it before the real events.
		const forgedBody = JSON.stringify({
			type: 'message.created',
			timestamp: new Date().toISOString(),
			data: { conversation_id: randomUUID(), message: { role: 'user', content: FORGED_MESSAGE } },
		});
		const unsigned = await fetch(webhookUrl, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: forgedBody,
		});
		check(
			unsigned.status === 401,
			'an unsigned request to the webhook URL gets 401',
			unsigned.status,
		);
		const forged = await fetch(webhookUrl, {
			method: 'POST',
			headers: forgedDelivery(forgedBody),
			body: forgedBody,
		});
		check(
			forged.status === 401,
			'a delivery signed with another secret gets 401',
			`${forged.status} ${await forged.text()}`,
		);

		const conversation = await apiPost(api, '/api/conversation', { chatbot_id: api.chatbotId });
		const conversationId = String(conversation.conversation_id);
		await apiPost(api, '/api/message', {
			conversation_id: conversationId,
			message: TRIGGER_MESSAGE,
		});
		log('sent a message through the API; waiting for the workflow runs');

		const ofConversation = (event: JsonObject, type: string): boolean =>
			event.type === type && isObject(event.data) && event.data.conversation_id === conversationId;
		const userMessage = (event: JsonObject): boolean =>
			ofConversation(event, 'message.created') &&
			isObject(event.data) &&
			isObject(event.data.message) &&
			event.data.message.role === 'user' &&
			event.data.message.content === TRIGGER_MESSAGE;
		await waitFor('the events in the workflow', 90_000, () =>
			sink.received.some((event) => ofConversation(event, 'conversation.created')) &&
			sink.received.some(userMessage)
				? true
				: undefined,
		);
		const created = sink.received.find((event) => ofConversation(event, 'conversation.created'));
		check(
			created !== undefined &&
				typeof created.event_id === 'string' &&
				created.event_id.startsWith('evt_') &&
				isObject(created.data) &&
				created.data.chatbot_id === api.chatbotId,
			'a workflow run started with conversation.created for the conversation (event_id, chatbot_id)',
			sink.received,
		);
		check(
			sink.received.some(userMessage),
			"a workflow run started with message.created carrying the visitor's message",
			sink.received,
		);

		// Every run reached the sink, and none of them was the forged request.
		const settled = await waitFor('the runs to finish', 30_000, async () => {
			const executions = await executionsOf(server, workflow.id);
			const finished = executions.every(
				(execution) => !['new', 'running', 'waiting'].includes(String(execution.status)),
			);
			return finished && executions.length === sink.received.length ? executions : undefined;
		});
		check(
			settled !== undefined &&
				settled.every((execution) => execution.status === 'success') &&
				!JSON.stringify(sink.received).includes(FORGED_MESSAGE),
			'the forged requests started no run: every run of the workflow is a signed delivery',
			{ executions: await executionsOf(server, workflow.id), received: sink.received.length },
		);

		const deactivated = await n8nRest(
			server,
			'POST',
			`/rest/workflows/${workflow.id}/deactivate`,
			{},
		);
		check(deactivated.status === 200, 'the trigger workflow deactivates', deactivated.body);
		const left = (await listEndpoints(api, manageKey)).filter(
			(endpoint) => endpoint.url === webhookUrl,
		);
		check(left.length === 0, 'deactivating removed the webhook endpoint', left);

		// A key of scope chat cannot register endpoints: activation fails and says why.
		const chatCredential = await createCredential(
			server,
			'Chatbot (chat key)',
			{ baseUrl: api.baseUrl, apiKey: api.apiKey },
			MANAGE_CREDENTIAL_TYPE,
		);
		const chatWebhookId = randomUUID();
		const chatWorkflow = await createTriggerWorkflow(server, {
			name: 'Chatbot trigger e2e (chat key)',
			webhookId: chatWebhookId,
			credential: chatCredential,
			sinkUrl: sink.url,
		});
		const refused = await n8nRest(server, 'POST', `/rest/workflows/${chatWorkflow.id}/activate`, {
			versionId: chatWorkflow.versionId,
		});
		check(
			refused.status >= 400 && JSON.stringify(refused.body).includes('scope \\"manage\\"'),
			'with a key of scope chat, activation fails and names the scope it needs',
			refused,
		);
		if (keepFiles) {
			writeFileSync(
				join(server.userFolder, 'trigger-run.json'),
				JSON.stringify({ received: sink.received, refused: refused.body }, null, 2),
			);
		}
	} finally {
		await sink.close();
	}
}

/* 7. streaming: a Webhook set to stream, the node's reply streamed through it ------------------ */

const STREAM_MESSAGE = 'Do you ship to Belgium, and how long does it take?';

/** One line of n8n's streamed webhook response (NDJSON). */
interface N8nChunk {
	type: string;
	content?: string;
	nodeName?: string;
}

/** POSTs to a webhook set to stream and reads n8n's NDJSON chunks as they arrive. */
async function readStreamedWebhook(url: string, body: JsonObject): Promise<N8nChunk[]> {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	if (!response.body) throw new Error(`the webhook answered ${response.status} without a body`);
	const chunks: N8nChunk[] = [];
	const decoder = new TextDecoder();
	let pending = '';
	const take = (line: string): void => {
		if (line.trim() === '') return;
		const parsed = JSON.parse(line) as Json;
		if (!isObject(parsed)) return;
		const metadata = isObject(parsed.metadata) ? parsed.metadata : {};
		chunks.push({
			type: String(parsed.type),
			...(typeof parsed.content === 'string' ? { content: parsed.content } : {}),
			...(typeof metadata.nodeName === 'string' ? { nodeName: metadata.nodeName } : {}),
		});
	};
	for await (const piece of response.body) {
		pending += decoder.decode(piece, { stream: true });
		const lines = pending.split('\n');
		pending = lines.pop() ?? '';
		for (const line of lines) take(line);
	}
	take(pending + decoder.decode());
	return chunks;
}

/**
 * Webhook (Respond: Streaming) → Start Conversation → Send Message → a recorder: the credential has
 * the Stream URL, so Send Message streams the chatbot's reply into n8n's response. The streamed
 * text must be the reply the API stored, and the node's output the stored messages.
 */
async function webhookStreamsReply(server: N8nServer, api: Api): Promise<void> {
	if (!api.streamUrl) {
		log('skipping streaming: no stream URL (set CHATBOT_STREAM_URL with CHATBOT_API_BASE_URL)');
		return;
	}
	const sink = await startSink();
	try {
		const credential = await createCredential(server, 'Chatbot (streaming)', {
			baseUrl: api.baseUrl,
			apiKey: api.apiKey,
			streamUrl: api.streamUrl,
		});
		const path = `chatbot-stream-${randomUUID()}`;
		const workflow = JSON.parse(
			readFileSync(join(e2eDir, 'stream-workflow.json'), 'utf8')
				.replaceAll('__WEBHOOK_ID__', randomUUID())
				.replaceAll('__WEBHOOK_PATH__', path)
				.replaceAll('__CHATBOT_ID__', api.chatbotId)
				.replaceAll('__CREDENTIAL_ID__', String(credential.id))
				.replaceAll('__CREDENTIAL_NAME__', String(credential.name))
				.replaceAll('__SINK_URL__', sink.url),
		) as JsonObject;
		const created = await n8nRest(server, 'POST', '/rest/workflows', workflow);
		const { data } = created;
		if (!isObject(data) || typeof data.id !== 'string' || typeof data.versionId !== 'string') {
			throw new Error(`creating the streaming workflow failed: ${JSON.stringify(created.body)}`);
		}
		const activated = await n8nRest(server, 'POST', `/rest/workflows/${data.id}/activate`, {
			versionId: data.versionId,
		});
		if (activated.status !== 200) {
			throw new Error(
				`activating the streaming workflow failed: ${JSON.stringify(activated.body)}`,
			);
		}

		const chunks = await readStreamedWebhook(`${server.base}/webhook/${path}`, {
			message: STREAM_MESSAGE,
		});
		const sent = chunks.filter((chunk) => chunk.nodeName === 'Send Message');
		const text = sent
			.filter((chunk) => chunk.type === 'item')
			.map((chunk) => chunk.content ?? '')
			.join('');

		log(
			`Send Message streamed ${sent.filter((chunk) => chunk.type === 'item').length} item chunks (${text.length} characters)`,
		);
		const outputs = await waitFor('the output of Send Message', 30_000, () =>
			sink.received.length > 0 ? sink.received : undefined,
		);
		const conversationId = String(outputs?.[0]?.conversation_id ?? '');
		const messages = await storedMessages(api, conversationId);
		const asked = messages.findIndex(
			(message) => message.role === 'user' && message.content === STREAM_MESSAGE,
		);
		const replies = messages.slice(asked + 1).filter((message) => message.role === 'assistant');
		const storedReply = replies.map((message) => String(message.content)).join('\n\n');

		check(
			sent[0]?.type === 'begin' &&
				sent.at(-1)?.type === 'end' &&
				sent.filter((chunk) => chunk.type === 'item').length >= 1 &&
				!chunks.some((chunk) => chunk.type === 'error'),
			"a Webhook set to stream gets Send Message's chunks: begin, the reply's items, end",
			chunks,
		);
		check(
			asked >= 0 && replies.length >= 1 && text === storedReply,
			'the streamed chunks join to the reply the API stored (GET /api/conversation/{id}/messages)',
			{ streamed: text, stored: storedReply },
		);
		check(
			outputs !== undefined &&
				outputs.length === replies.length &&
				outputs.every((item, index) => {
					const message = replies[index];
					return (
						message !== undefined &&
						item.conversation_id === conversationId &&
						item.message_id === message.message_id &&
						item.role === message.role &&
						item.content === message.content &&
						item.created_at === message.created_at
					);
				}),
			'the streaming Send Message outputs the stored reply messages, as without streaming',
			{ outputs, replies },
		);

		await n8nRest(server, 'POST', `/rest/workflows/${data.id}/deactivate`, {});
	} finally {
		await sink.close();
	}
}

/* main ------------------------------------------------------------------------------------------ */

async function main(): Promise<void> {
	const n8nBin = await ensureHarness();
	const workDir = mkdtempSync(join(tmpdir(), 'n8n-chatbot-e2e-'));
	const userFolder = join(workDir, 'n8n');
	mkdirSync(userFolder, { recursive: true });
	// Chosen first: the local API may deliver webhooks to this port of 127.0.0.1 and no other.
	const n8nPort = await freePort();
	const { api, stop } = await startApi(workDir, n8nPort);
	try {
		await installPackedPackage(userFolder, workDir);
		await executeWorkflow(n8nBin, userFolder, api);
		await conversationOperations(n8nBin, userFolder, api);
		await agentUsesTheNode(n8nBin, userFolder, api);
		await withN8nServer(n8nBin, userFolder, n8nPort, async (server) => {
			await credentialTest(server, api);
			await webhookStreamsReply(server, api);
			await triggerStartsWorkflows(server, api);
		});
	} finally {
		await stop();
		if (keepFiles) log(`kept ${workDir} (E2E_KEEP=1)`);
		else rmSync(workDir, { recursive: true, force: true });
	}
}

try {
	await main();
} catch (error) {
	failures.push(error instanceof Error ? error.message : String(error));
	log(`ERROR ${error instanceof Error ? error.message : String(error)}`);
}
for (const child of children) child.kill('SIGKILL');
console.log(`e2e: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length > 0 ? 1 : 0);
