// Bundles the extension into one file (dist/extension.js) so the .vsix needs no node_modules.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
await esbuild.build({
    entryPoints: ['src/extension.ts'],
    bundle: true,
    outfile: 'dist/extension.js',
    format: 'cjs',
    platform: 'node',
    target: 'node18',
    external: ['vscode'],
    sourcemap: !production,
    minify: production,
    logLevel: 'warning',
});
