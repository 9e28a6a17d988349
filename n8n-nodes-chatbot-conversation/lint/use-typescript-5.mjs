// Loaded with `node --import` for n8n's lint only.
//
// The repository root pins TypeScript 7 (the native compiler, which has no JavaScript
// API). npm hoists part of n8n's ESLint stack (ts-api-utils, whose peer range accepts
// any TypeScript >= 4.8) to the root, where `require('typescript')` would load that
// TypeScript 7 and crash. This hook makes every `typescript` import or require inside
// the lint run load this package's own TypeScript 5 instead.
import * as nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';

if (typeof nodeModule.registerHooks !== 'function') {
	throw new Error(
		`n8n lint runs on Node 24 (module.registerHooks); this is Node ${process.version}`,
	);
}
const require = nodeModule.createRequire(import.meta.url);
const entry = require.resolve('typescript');
const { version } = require('typescript/package.json');
if (!version.startsWith('5.')) {
	throw new Error(`n8n lint needs TypeScript 5 next to the package; found ${version} at ${entry}`);
}
const url = pathToFileURL(entry).href;

nodeModule.registerHooks({
	resolve(specifier, context, nextResolve) {
		if (specifier === 'typescript') return { url, format: 'commonjs', shortCircuit: true };
		return nextResolve(specifier, context);
	},
});
