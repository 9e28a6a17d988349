// `npm publish` runs this first (prepublishOnly). A real publish must come from the release flow:
// `npm run release` (n8n-node release) or the GitHub Actions workflow that publishes with npm
// provenance, which both set RELEASE_MODE; n8n-node's own guard (`n8n-node prerelease`) checks that
// and refuses anything else. A dry run publishes nothing, so `npm publish --dry-run` may always run:
// it shows exactly what a release would contain (prepack has just built dist/).
import { spawnSync } from 'node:child_process';

if (process.env.npm_config_dry_run !== 'true') {
	const guard = spawnSync('n8n-node', ['prerelease'], {
		stdio: 'inherit',
		shell: process.platform === 'win32',
	});
	process.exit(guard.status ?? 1);
}
