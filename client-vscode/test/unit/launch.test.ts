import * as assert from 'assert';
import { BundleInfo, bundledEnv, checkBundleFits, parseBundleManifest, parseImportStrategy, planLaunch } from '../../src/core/launch';

const bundle: BundleInfo = { libs: '/ext/bundled/libs', manifest: { python: '3.11', platform: 'linux-x64', tfperf: '0.1.0' } };

describe('tfperf.importStrategy: which command and environment start the server', () => {
    it('defaults to useBundled, as Microsoft\'s Python tool extensions do; unknown values too', () => {
        assert.strictEqual(parseImportStrategy(undefined), 'useBundled');
        assert.strictEqual(parseImportStrategy('bogus'), 'useBundled');
        assert.strictEqual(parseImportStrategy('fromEnvironment'), 'fromEnvironment');
    });

    it('useBundled with a bundle: PYTHONPATH = bundled/libs first, the user\'s PYTHONPATH after it', () => {
        const plan = planLaunch('useBundled', bundle, 'linux-x64', '/user/a:/user/b', ':');
        assert.deepStrictEqual(plan, {
            requested: 'useBundled',
            strategy: 'useBundled',
            env: { PYTHONPATH: '/ext/bundled/libs:/user/a:/user/b', TFPERF_BUNDLED_LIBS: '/ext/bundled/libs' },
        });
        assert.deepStrictEqual(planLaunch(undefined, bundle, 'linux-x64', undefined, ':').env,
            { PYTHONPATH: '/ext/bundled/libs', TFPERF_BUNDLED_LIBS: '/ext/bundled/libs' });
    });

    it('bundledEnv uses the platform\'s separator and does not repeat the bundle', () => {
        assert.strictEqual(bundledEnv('C:\\ext\\libs', 'C:\\ext\\libs;D:\\x', ';').PYTHONPATH, 'C:\\ext\\libs;D:\\x');
    });

    it('fromEnvironment: the interpreter\'s installed tfperf, no extra environment, no message', () => {
        assert.deepStrictEqual(planLaunch('fromEnvironment', bundle, 'linux-x64', '/user/a', ':'),
            { requested: 'fromEnvironment', strategy: 'fromEnvironment', env: {} });
    });

    it('useBundled without a bundle (development build): falls back to fromEnvironment with a warning saying so', () => {
        for (const missing of [{}, { libs: '/ext/bundled/libs' }, { manifest: bundle.manifest }] as BundleInfo[]) {
            const plan = planLaunch('useBundled', missing, 'linux-x64', undefined, ':');
            assert.strictEqual(plan.strategy, 'fromEnvironment');
            assert.deepStrictEqual(plan.env, {});
            assert.strictEqual(plan.notice?.id, 'bundleUnavailable');
            assert.strictEqual(plan.notice?.severity, 'warning');
            assert.match(plan.notice!.text, /no bundled server .* using the tfperf installed in the interpreter's environment/);
        }
    });

    it('useBundled with a bundle for another platform: falls back and names both platforms', () => {
        const plan = planLaunch('useBundled', bundle, 'darwin-arm64', undefined, ':');
        assert.strictEqual(plan.strategy, 'fromEnvironment');
        assert.match(plan.notice!.text, /built for linux-x64, not darwin-arm64/);
    });

    it('after the probe: the bundle fits the interpreter\'s Python minor version, or falls back naming both', () => {
        const plan = planLaunch('useBundled', bundle, 'linux-x64', undefined, ':');
        assert.strictEqual(checkBundleFits(plan, bundle, '/env/bin/python', '3.11.7'), plan);
        assert.strictEqual(checkBundleFits(plan, bundle, '/env/bin/python', undefined), plan);
        const other = checkBundleFits(plan, bundle, '/env/bin/python', '3.12.1');
        assert.strictEqual(other.strategy, 'fromEnvironment');
        assert.deepStrictEqual(other.env, {});
        assert.match(other.notice!.text, /built for Python 3\.11; \/env\/bin\/python is Python 3\.12\.1: using the tfperf installed in that environment/);
        const fromEnv = planLaunch('fromEnvironment', bundle, 'linux-x64', undefined, ':');
        assert.strictEqual(checkBundleFits(fromEnv, bundle, '/env/bin/python', '3.12.1'), fromEnv);
    });

    it('reads bundled/bundle.json as scripts/package.sh writes it', () => {
        assert.deepStrictEqual(parseBundleManifest('{"python": "3.11", "platform": "linux-x64", "tfperf": "0.1.0"}\n'), bundle.manifest);
        assert.strictEqual(parseBundleManifest('{"python": 3}'), undefined);
        assert.strictEqual(parseBundleManifest('not json'), undefined);
    });
});
