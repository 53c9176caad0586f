// package.json (what users can set) and settings.ts (what reaches the server) must agree.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { ServerSettings, toServerSettings } from '../../src/core/settings';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const contributed = Object.keys(manifest.contributes.configuration.properties).map((k) => k.replace(/^tfperf\./, ''));
const CLIENT_ONLY = ['interpreter', 'importStrategy', 'trace.server', 'showNotifications']; // used by the extension itself, not sent

describe('package.json settings', () => {
    it('every contributed setting is sent to the server, and every setting read is contributed', () => {
        const read = new Set<string>();
        toServerSettings((key) => { read.add(key); return undefined; }, true);
        assert.deepStrictEqual([...read].sort(), contributed.filter((k) => !CLIENT_ONLY.includes(k)).sort());
    });

    it('defaults in package.json equal the defaults sent when nothing is set', () => {
        const props = manifest.contributes.configuration.properties;
        const fromManifest = toServerSettings((key) => props[`tfperf.${key}`]?.default, true).settings;
        assert.deepStrictEqual(fromManifest, toServerSettings(() => undefined, true).settings);
    });

    it('every number setting is clamped to exactly the minimum and maximum package.json declares', () => {
        const props = manifest.contributes.configuration.properties;
        for (const [name, prop] of Object.entries(props as Record<string, { type: string; minimum?: number; maximum?: number }>)) {
            const key = name.replace(/^tfperf\./, '');
            if (prop.type !== 'number' || CLIENT_ONLY.includes(key)) {
                continue;
            }
            const [group, field] = key.split('.') as ['benchmark', keyof ServerSettings['benchmark']];
            assert.strictEqual(group, 'benchmark');
            if (prop.minimum !== undefined) {
                const { settings, problems } = toServerSettings((k) => (k === key ? prop.minimum! - 0.01 : undefined), true);
                assert.strictEqual(settings.benchmark[field], prop.minimum, key);
                assert.strictEqual(problems.length, 1, key);
            }
            if (prop.maximum !== undefined) {
                const { settings, problems } = toServerSettings((k) => (k === key ? prop.maximum! + 1 : undefined), true);
                assert.strictEqual(settings.benchmark[field], prop.maximum, key);
                assert.strictEqual(problems.length, 1, key);
            } else {
                const { problems } = toServerSettings((k) => (k === key ? 1e12 : undefined), true);
                assert.deepStrictEqual(problems, [], `${key} has no maximum: the client must not invent one`);
            }
        }
    });

    it('has an icon that is a PNG of at least 128x128', () => {
        const icon = fs.readFileSync(path.join(__dirname, '..', '..', '..', manifest.icon));
        assert.deepStrictEqual([...icon.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');
        assert.ok(icon.readUInt32BE(16) >= 128 && icon.readUInt32BE(20) >= 128);
        const ignore = fs.readFileSync(path.join(__dirname, '..', '..', '..', '.vscodeignore'), 'utf8');
        assert.ok(ignore.includes(`!${manifest.icon}`), 'the icon goes into the .vsix');
    });

    it('marks the settings that can run code as restricted in untrusted workspaces', () => {
        assert.deepStrictEqual(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
        assert.deepStrictEqual(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.sort(), ['tfperf.benchmark.workerCommand', 'tfperf.interpreter']);
    });

    it('contributes every command the extension registers, with the tfperf category', () => {
        const ids = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
        assert.deepStrictEqual(ids, ['tfperf.benchmarkAllInFile', 'tfperf.benchmarkAtCursor', 'tfperf.clearBenchmarkResults', 'tfperf.observeFile', 'tfperf.openRuleDocs', 'tfperf.restart', 'tfperf.showOutput']);
        const source = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'src', 'commands.ts'), 'utf8');
        for (const id of ids) {
            assert.ok(source.includes(`registerCommand('${id}'`), `${id} is registered in src/commands.ts`);
        }
    });
});
