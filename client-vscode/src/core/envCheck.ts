// What to do with the output of `<python> server/check_env.py` (docs/contract.md, "Launch"):
// start the server or not, and which messages to show. Pure.
import { Notice, notices } from './notices';

export interface EnvReport {
    python: string;
    python_ok: boolean;
    executable: string;
    tfperf: string | null;
    tfperf_source: 'environment' | 'bundled' | null;
    missing: string[];
    tensorflow: string | null;
    keras: string | null;
}

/** How running check_env.py went, as seen by the process runner. */
export type ProbeOutcome =
    | { kind: 'ok'; stdout: string; stderr: string }
    | { kind: 'spawnError'; code: string; message: string } // ENOENT, EACCES, ...
    | { kind: 'timeout'; seconds: number }
    | { kind: 'exit'; code: number | null; stdout: string; stderr: string };

export interface StartPlan {
    start: boolean;
    notices: Notice[];
    report?: EnvReport;
}

export interface PlanContext {
    interpreter: string;
    pythonExtensionInstalled: boolean;
    /** A tfperf wheel ships in the .vsix, so "Install tfperf" can work. */
    canInstall: boolean;
}

/** Finds the JSON object in the probe's stdout (a sitecustomize may print noise before it). */
export function parseEnvReport(stdout: string): EnvReport | undefined {
    const lines = stdout.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.startsWith('{'));
    for (let i = lines.length - 1; i >= 0; i--) {
        try {
            const value = JSON.parse(lines[i]) as Partial<EnvReport>;
            if (typeof value === 'object' && value !== null && typeof value.python_ok === 'boolean') {
                return {
                    python: String(value.python ?? ''),
                    python_ok: value.python_ok,
                    executable: String(value.executable ?? ''),
                    tfperf: value.tfperf ?? null,
                    tfperf_source: value.tfperf_source ?? null,
                    missing: Array.isArray(value.missing) ? value.missing.map(String) : [],
                    tensorflow: value.tensorflow ?? null,
                    keras: value.keras ?? null,
                };
            }
        } catch {
            // not JSON; keep looking
        }
    }
    return undefined;
}

// Pythons before 3.8 die importing importlib.metadata, and Python 2 on the syntax, before
// check_env.py can report python_ok=false.
const OLD_PYTHON_ERRORS = /No module named '?importlib\.metadata'?|No module named metadata|SyntaxError/;

export function planFromProbe(outcome: ProbeOutcome, ctx: PlanContext): StartPlan {
    switch (outcome.kind) {
        case 'spawnError':
            if (outcome.code === 'ENOENT' || outcome.code === 'EACCES') {
                return { start: false, notices: [notices.interpreterNotFound(ctx.interpreter, ctx.pythonExtensionInstalled)] };
            }
            return { start: false, notices: [notices.probeFailed(ctx.interpreter, outcome.message)] };
        case 'timeout':
            return { start: false, notices: [notices.probeFailed(ctx.interpreter, `it did not answer within ${outcome.seconds} s.`)] };
        case 'exit': {
            if (OLD_PYTHON_ERRORS.test(outcome.stderr)) {
                return { start: false, notices: [notices.pythonTooOld(ctx.interpreter, versionIn(outcome.stderr), ctx.pythonExtensionInstalled)] };
            }
            return { start: false, notices: [notices.probeFailed(ctx.interpreter, lastLine(outcome.stderr) || `it exited with code ${outcome.code}.`)] };
        }
        case 'ok': {
            const report = parseEnvReport(outcome.stdout);
            if (report === undefined) {
                return { start: false, notices: [notices.probeFailed(ctx.interpreter, 'its answer was not the expected JSON (see the log).')] };
            }
            return planFromReport(report, ctx);
        }
    }
}

export function planFromReport(report: EnvReport, ctx: PlanContext): StartPlan {
    if (!report.python_ok) {
        return { start: false, report, notices: [notices.pythonTooOld(ctx.interpreter, report.python, ctx.pythonExtensionInstalled)] };
    }
    if (report.tfperf === null || report.missing.length > 0) {
        return { start: false, report, notices: [notices.needsInstall(ctx.interpreter, report.missing, report.tfperf !== null, ctx.canInstall, ctx.pythonExtensionInstalled)] };
    }
    if (report.tensorflow === null) {
        return { start: true, report, notices: [notices.noTensorflow(ctx.interpreter, ctx.pythonExtensionInstalled)] };
    }
    return { start: true, report, notices: [] };
}

function lastLine(text: string): string {
    const lines = text.trim().split(/\r?\n/);
    return lines[lines.length - 1]?.trim() ?? '';
}

function versionIn(text: string): string | undefined {
    return (/is Python (\d+\.\d+(?:\.\d+)?)/.exec(text) ?? /python ?(\d\.\d+(?:\.\d+)?)/i.exec(text))?.[1];
}

const SERVER_MODULES = /No module named '?(tfperf_lsp|pygls|lsprotocol|jedi|libcst)\b/;

/**
 * The server process died before answering initialize. Its stderr usually names the cause
 * (the launcher prints "tfperf cannot start with ...: No module named 'pygls'"); a missing
 * module gets the same install offer as check_env would have made.
 */
export function noticeForStartFailure(stderrTail: readonly string[], ctx: PlanContext): Notice {
    const text = stderrTail.join('\n');
    const module = SERVER_MODULES.exec(text)?.[1];
    if (module !== undefined) {
        const tfperfMissing = module === 'tfperf_lsp';
        return notices.needsInstall(ctx.interpreter, tfperfMissing ? [] : [module], !tfperfMissing, ctx.canInstall, ctx.pythonExtensionInstalled);
    }
    if (/needs Python 3\.\d+ or newer/.test(text)) {
        return notices.pythonTooOld(ctx.interpreter, versionIn(text), ctx.pythonExtensionInstalled);
    }
    const meaningful = stderrTail.map((l) => l.trim()).filter((l) => l !== '' && !/^(Traceback|File "|\^+$)/.test(l));
    return notices.startFailed(ctx.interpreter, meaningful[meaningful.length - 1]);
}
