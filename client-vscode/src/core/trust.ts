// Workspace trust rules (Restricted Mode). Pure.
import { isInsideAny } from './interpreter';
import { Notice, notices } from './notices';

/** Benchmarks execute the user's code, so they need a trusted workspace. undefined = allowed. */
export function benchmarkBlocked(workspaceTrusted: boolean): Notice | undefined {
    return workspaceTrusted ? undefined : notices.benchmarksNeedTrust();
}

/**
 * Starting the server runs the interpreter. In an untrusted folder, an interpreter that lives in
 * that folder (a checked-in venv, say) is code from the folder's authors: do not run it.
 */
export function interpreterBlocked(workspaceTrusted: boolean, interpreter: string, workspaceFolders: readonly string[]): Notice | undefined {
    if (workspaceTrusted || !isInsideAny(interpreter, workspaceFolders)) {
        return undefined;
    }
    return notices.untrustedInterpreter(interpreter);
}

/** Server commands that run code (the probe starts the worker: its command, TensorFlow's import);
 * everything else (rule docs, clearing results) is harmless. */
export const CODE_RUNNING_COMMANDS: ReadonlySet<string> = new Set(['tfperf.benchmark', 'tfperf.benchmarkFile', 'tfperf.probeDevice', 'tfperf.observe']);
