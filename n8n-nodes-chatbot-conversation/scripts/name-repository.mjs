// Names the GitHub repository the package is released from (`owner/name`, as GITHUB_REPOSITORY
// gives it) in package.json: `repository` (which npm checks against the provenance statement),
// `homepage` and `bugs`. The release workflow runs it before it packs and publishes, so every
// released package, on npm or as a release tarball, says where it comes from. The source names
// none: it cannot know where it will be published from, and a guess would be wrong for a fork.
//
//   node scripts/name-repository.mjs <owner>/<name> [package.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const [repository, file = resolve(import.meta.dirname, '..', 'package.json')] =
	process.argv.slice(2);
if (!/^[\w.-]+\/[\w.-]+$/.test(repository ?? '')) {
	console.error('usage: node scripts/name-repository.mjs <owner>/<name> [package.json]');
	process.exit(2);
}
const base = `https://github.com/${repository}`;
const manifest = JSON.parse(readFileSync(file, 'utf8'));
manifest.repository = {
	type: 'git',
	url: `git+${base}.git`,
	directory: 'n8n-nodes-chatbot-conversation',
};
manifest.homepage = `${base}/tree/main/n8n-nodes-chatbot-conversation#readme`;
manifest.bugs = { url: `${base}/issues` };
writeFileSync(file, `${JSON.stringify(manifest, null, '\t')}\n`);
console.log(`package.json names ${base}`);
