// Every message the extension shows, with the buttons that fix the problem. Pure data: extension code
// turns a Notice into showErrorMessage/showWarningMessage/showInformationMessage and runs the action.

export type ActionId =
    | 'installTfperf'
    | 'selectInterpreter'
    | 'openSettings'
    | 'showLog'
    | 'manageTrust'
    | 'restart'
    | 'dontShowAgain';

export const ACTION_LABELS: Record<ActionId, string> = {
    installTfperf: 'Install tfperf',
    selectInterpreter: 'Select Interpreter',
    openSettings: 'Open Settings',
    showLog: 'Show Log',
    manageTrust: 'Manage Workspace Trust',
    restart: 'Restart Server',
    dontShowAgain: "Don't Show Again",
};

/** `tfperf.showNotifications`, as Microsoft's Python tool extensions name it. */
export type NotificationLevel = 'off' | 'onError' | 'onWarning' | 'always';

const LEVEL_RANK: Record<NotificationLevel, number> = { off: 3, onError: 2, onWarning: 1, always: 0 };
const SEVERITY_RANK: Record<'error' | 'warning' | 'info', number> = { error: 2, warning: 1, info: 0 };

/** Pop up a message of this severity? (Every notice is written to the output channel anyway.) */
export function shouldNotify(level: unknown, severity: 'error' | 'warning' | 'info'): boolean {
    const rank = LEVEL_RANK[level as NotificationLevel] ?? LEVEL_RANK.always;
    return SEVERITY_RANK[severity] >= rank;
}

export type NoticeId =
    | 'noInterpreter'
    | 'unresolvedInterpreter'
    | 'interpreterNotFound'
    | 'probeFailed'
    | 'startFailed'
    | 'pythonTooOld'
    | 'needsInstall'
    | 'noTensorflow'
    | 'untrustedInterpreter'
    | 'benchmarksNeedTrust'
    | 'crashLoop'
    | 'installSucceeded'
    | 'installFailed'
    | 'noBenchmarkableFinding'
    | 'noFindings'
    | 'serverNotRunning'
    | 'settingsProblems'
    | 'bundleUnavailable';

export interface Notice {
    id: NoticeId;
    severity: 'error' | 'warning' | 'info';
    text: string;
    actions: ActionId[];
}

/** "Select Interpreter" only makes sense when the Python extension can show its picker. */
function interpreterActions(pythonExtensionInstalled: boolean): ActionId[] {
    return pythonExtensionInstalled ? ['selectInterpreter', 'openSettings'] : ['openSettings'];
}

export const notices = {
    noInterpreter(pythonExtensionInstalled: boolean): Notice {
        return {
            id: 'noInterpreter',
            severity: 'warning',
            text: pythonExtensionInstalled
                ? 'tfperf needs a Python interpreter (3.10+), ideally the one with TensorFlow. Select one with the Python extension or set tfperf.interpreter.'
                : 'tfperf needs a Python interpreter (3.10+), ideally the one with TensorFlow. Set tfperf.interpreter to its path, or install the Python extension and select one.',
            actions: interpreterActions(pythonExtensionInstalled),
        };
    },

    unresolvedInterpreter(setting: string): Notice {
        return {
            id: 'unresolvedInterpreter',
            severity: 'warning',
            text: `tfperf.interpreter is "${setting}", which needs a folder to be open. Open a folder, or use an absolute path.`,
            actions: ['openSettings'],
        };
    },

    interpreterNotFound(interpreter: string, pythonExtensionInstalled: boolean): Notice {
        return {
            id: 'interpreterNotFound',
            severity: 'error',
            text: `tfperf cannot run the Python interpreter ${interpreter}: it does not exist or is not executable.`,
            actions: interpreterActions(pythonExtensionInstalled),
        };
    },

    probeFailed(interpreter: string, detail: string): Notice {
        return {
            id: 'probeFailed',
            severity: 'error',
            text: `tfperf could not inspect ${interpreter}: ${detail}`,
            actions: ['showLog', 'restart'],
        };
    },

    startFailed(interpreter: string, lastError: string | undefined): Notice {
        return {
            id: 'startFailed',
            severity: 'error',
            text: lastError
                ? `The tfperf server exited while starting with ${interpreter}: ${lastError}`
                : `The tfperf server exited while starting with ${interpreter}. The log shows why.`,
            actions: ['showLog', 'restart'],
        };
    },

    pythonTooOld(interpreter: string, version: string | undefined, pythonExtensionInstalled: boolean): Notice {
        const which = version ? `Python ${version}` : 'an older Python';
        return {
            id: 'pythonTooOld',
            severity: 'error',
            text: `tfperf needs Python 3.10 or newer, but ${interpreter} is ${which}. Choose a newer interpreter.`,
            actions: interpreterActions(pythonExtensionInstalled),
        };
    },

    needsInstall(interpreter: string, missing: readonly string[], tfperfInstalled: boolean, canInstall: boolean, pythonExtensionInstalled = false): Notice {
        const what = tfperfInstalled
            ? `The tfperf server needs ${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} missing from ${interpreter}.`
            : `tfperf is not installed in ${interpreter}.`;
        const fix = canInstall
            ? 'Install tfperf into this environment (uses pip), or choose another interpreter.'
            : `Run "${interpreter} -m pip install tfperf", or choose another interpreter.`;
        return {
            id: 'needsInstall',
            severity: 'warning',
            text: `${what} ${fix}`,
            actions: [...(canInstall ? ['installTfperf' as const] : []), pythonExtensionInstalled ? 'selectInterpreter' : 'openSettings', 'showLog'],
        };
    },

    noTensorflow(interpreter: string, pythonExtensionInstalled = false): Notice {
        return {
            id: 'noTensorflow',
            severity: 'info',
            text: `TensorFlow is not installed in ${interpreter}: hints and quick fixes work, benchmarks are unavailable. Install TensorFlow there, or choose the environment that has it.`,
            actions: [pythonExtensionInstalled ? 'selectInterpreter' : 'openSettings', 'dontShowAgain'],
        };
    },

    untrustedInterpreter(interpreter: string): Notice {
        return {
            id: 'untrustedInterpreter',
            severity: 'warning',
            text: `tfperf will not run ${interpreter} because it is inside this folder, which you have not trusted. Trust the folder, or set tfperf.interpreter (user settings) to a Python outside it.`,
            actions: ['manageTrust', 'openSettings'],
        };
    },

    benchmarksNeedTrust(): Notice {
        return {
            id: 'benchmarksNeedTrust',
            severity: 'warning',
            text: 'Benchmarks run your code, so they are disabled until you trust this folder. Hints and quick fixes keep working.',
            actions: ['manageTrust'],
        };
    },

    crashLoop(crashes: number, minutes: number): Notice {
        return {
            id: 'crashLoop',
            severity: 'error',
            text: `The tfperf server stopped unexpectedly ${crashes} times in ${minutes} minutes, so it will not be restarted. The log shows why.`,
            actions: ['showLog', 'restart'],
        };
    },

    installSucceeded(interpreter: string): Notice {
        return {
            id: 'installSucceeded',
            severity: 'info',
            text: `Installed tfperf into ${interpreter}. Starting the server.`,
            actions: [],
        };
    },

    installFailed(interpreter: string, output: string, pythonExtensionInstalled = false): Notice {
        return { id: 'installFailed', severity: 'error', text: explainPipFailure(interpreter, output), actions: ['showLog', pythonExtensionInstalled ? 'selectInterpreter' : 'openSettings'] };
    },

    noBenchmarkableFinding(): Notice {
        return {
            id: 'noBenchmarkableFinding',
            severity: 'info',
            text: 'There is no benchmarkable tfperf finding at the cursor. Put the cursor on a squiggle that offers "Benchmark", or run "tfperf: Benchmark All Findings in File".',
            actions: [],
        };
    },

    noFindings(): Notice {
        return { id: 'noFindings', severity: 'info', text: 'tfperf has no benchmarkable findings in this file.', actions: [] };
    },

    serverNotRunning(): Notice {
        return { id: 'serverNotRunning', severity: 'warning', text: 'The tfperf server is not running.', actions: ['showLog', 'restart'] };
    },

    settingsProblems(problems: readonly string[]): Notice {
        return { id: 'settingsProblems', severity: 'warning', text: `tfperf settings: ${problems.join(' ')}`, actions: ['openSettings'] };
    },
};

/** pip's failures have a handful of causes a user can act on; name them instead of dumping pip's output. */
export function explainPipFailure(interpreter: string, output: string): string {
    if (/No module named '?pip'?/.test(output)) {
        return `${interpreter} has no pip. Run "${interpreter} -m ensurepip", or choose another interpreter.`;
    }
    if (/externally-managed-environment/.test(output)) {
        return `${interpreter} is managed by the operating system and refuses pip installs. Create a virtual environment (python3 -m venv .venv), install TensorFlow there, and select it.`;
    }
    if (/Permission denied|EnvironmentError: \[Errno 13\]|Errno 13/.test(output)) {
        return `No permission to install into ${interpreter}. Use a virtual environment you own.`;
    }
    if (/Could not find a version that satisfies|Failed to establish a new connection|ProxyError|Network is unreachable|Temporary failure in name resolution/.test(output)) {
        return 'pip could not download the tfperf server\'s dependencies. Check your network or proxy settings (pip config), then try again.';
    }
    return `Installing tfperf into ${interpreter} failed. The log has pip's output.`;
}
