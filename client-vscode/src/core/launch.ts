// `tfperf.importStrategy`: which tfperf the selected interpreter runs. Pure (no vscode, no fs).
//
//   useBundled       the .vsix carries tfperf and its libraries in bundled/libs (pip install --target,
//                    scripts/package.sh); the interpreter runs server/tfperf_server.py with PYTHONPATH
//                    = bundled/libs, so nothing is installed into the user's environment. The launcher
//                    takes bundled/libs off PYTHONPATH again once it is on sys.path, so the benchmark
//                    worker (the user's code, in the user's environment) never sees the bundled copies.
//   fromEnvironment  the interpreter's own installed tfperf (pip install it there), as before.
//
// The bundle holds binary wheels (libcst, numpy), so it fits one platform and one Python minor
// version, written in bundled/bundle.json. When useBundled cannot be honoured (no bundle in this
// build, another platform, another Python), the extension falls back to fromEnvironment and says why.
import { Notice } from './notices';

export type ImportStrategy = 'useBundled' | 'fromEnvironment';
export const IMPORT_STRATEGIES: readonly ImportStrategy[] = ['useBundled', 'fromEnvironment'];
export const DEFAULT_IMPORT_STRATEGY: ImportStrategy = 'useBundled';

/** bundled/bundle.json, written by scripts/package.sh. */
export interface BundleManifest {
    /** Python minor version the binary libraries were installed for, e.g. "3.11". */
    python: string;
    /** VS Code target the libraries fit, e.g. "linux-x64" (process.platform-process.arch). */
    platform: string;
    /** tfperf's version in the bundle. */
    tfperf: string;
}

/** What the extension knows about its bundle before starting anything. */
export interface BundleInfo {
    /** Absolute path of bundled/libs, when this build has one. */
    libs?: string;
    manifest?: BundleManifest;
}

export interface LaunchPlan {
    requested: ImportStrategy;
    /** What is used: useBundled only when the bundle exists and fits. */
    strategy: ImportStrategy;
    /** Added to the environment of check_env.py and of the server. */
    env: Record<string, string>;
    /** Why the requested strategy is not used, when it is not. */
    notice?: Notice;
}

export function parseImportStrategy(value: unknown): ImportStrategy {
    return IMPORT_STRATEGIES.includes(value as ImportStrategy) ? (value as ImportStrategy) : DEFAULT_IMPORT_STRATEGY;
}

export function parseBundleManifest(text: string): BundleManifest | undefined {
    try {
        const value = JSON.parse(text) as Partial<BundleManifest>;
        if (typeof value.python === 'string' && typeof value.platform === 'string') {
            return { python: value.python, platform: value.platform, tfperf: String(value.tfperf ?? '') };
        }
    } catch {
        // fall through
    }
    return undefined;
}

/** The environment that makes `python server/tfperf_server.py` import from the bundle first. */
export function bundledEnv(libs: string, existingPythonPath: string | undefined, pathSeparator: string): Record<string, string> {
    const rest = (existingPythonPath ?? '').split(pathSeparator).filter((p) => p !== '' && p !== libs);
    return { PYTHONPATH: [libs, ...rest].join(pathSeparator), TFPERF_BUNDLED_LIBS: libs };
}

function fallback(requested: ImportStrategy, text: string): LaunchPlan {
    return {
        requested,
        strategy: 'fromEnvironment',
        env: {},
        notice: { id: 'bundleUnavailable', severity: 'warning', text, actions: ['openSettings', 'showLog'] },
    };
}

/**
 * Before the probe: the strategy and environment to try. `platform` is this machine's
 * `${process.platform}-${process.arch}`.
 */
export function planLaunch(
    setting: unknown,
    bundle: BundleInfo,
    platform: string,
    existingPythonPath: string | undefined,
    pathSeparator: string,
): LaunchPlan {
    const requested = parseImportStrategy(setting);
    if (requested === 'fromEnvironment') {
        return { requested, strategy: 'fromEnvironment', env: {} };
    }
    if (bundle.libs === undefined || bundle.manifest === undefined) {
        return fallback(requested, 'This build of the tfperf extension has no bundled server (bundled/libs), so tfperf.importStrategy "useBundled" '
            + 'cannot be used: using the tfperf installed in the interpreter\'s environment instead. Package the extension with '
            + 'scripts/package.sh, or set tfperf.importStrategy to "fromEnvironment" to silence this message.');
    }
    if (bundle.manifest.platform !== platform) {
        return fallback(requested, `The tfperf server bundled with this extension is built for ${bundle.manifest.platform}, not ${platform}: `
            + 'using the tfperf installed in the interpreter\'s environment instead. Install the extension built for this platform.');
    }
    return { requested, strategy: 'useBundled', env: bundledEnv(bundle.libs, existingPythonPath, pathSeparator) };
}

/** "3.11.7" -> "3.11". */
function minor(version: string): string {
    return version.split('.').slice(0, 2).join('.');
}

/**
 * After the probe (check_env.py run with plan.env): the bundle's binary libraries only load in
 * the Python version they were installed for. A mismatch falls back to fromEnvironment (the caller
 * probes again without the bundle's environment). Returns the plan unchanged when it fits.
 */
export function checkBundleFits(plan: LaunchPlan, bundle: BundleInfo, interpreter: string, pythonVersion: string | undefined): LaunchPlan {
    if (plan.strategy !== 'useBundled' || bundle.manifest === undefined || pythonVersion === undefined || pythonVersion === '') {
        return plan;
    }
    if (minor(pythonVersion) === bundle.manifest.python) {
        return plan;
    }
    return fallback(plan.requested, `The tfperf server bundled with this extension is built for Python ${bundle.manifest.python}; `
        + `${interpreter} is Python ${pythonVersion}: using the tfperf installed in that environment instead `
        + '(as with tfperf.importStrategy "fromEnvironment").');
}
