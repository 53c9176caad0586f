// Running the interpreter: the environment probe and pip. Node only (no vscode), so unit-testable.
import { spawn } from 'child_process';
import { ProbeOutcome } from '../core/envCheck';

export const PROBE_TIMEOUT_S = 30;

/** Runs `<python> check_env.py`. Never rejects: every failure is a ProbeOutcome. */
export function runProbe(python: string, script: string, timeoutS = PROBE_TIMEOUT_S, cwd?: string, env?: Record<string, string>): Promise<ProbeOutcome> {
    return new Promise((resolve) => {
        let stdout = '';
        let stderr = '';
        let settled = false;
        const finish = (outcome: ProbeOutcome) => {
            if (!settled) {
                settled = true;
                clearTimeout(timer);
                resolve(outcome);
            }
        };
        const child = spawn(python, [script], { cwd, env: env === undefined ? undefined : { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            finish({ kind: 'timeout', seconds: timeoutS });
        }, timeoutS * 1000);
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', (err: NodeJS.ErrnoException) => finish({ kind: 'spawnError', code: err.code ?? 'UNKNOWN', message: err.message }));
        child.on('close', (code) => finish(code === 0 ? { kind: 'ok', stdout, stderr } : { kind: 'exit', code, stdout, stderr }));
    });
}

export interface CommandResult {
    ok: boolean;
    cancelled: boolean;
    output: string;
}

/** Runs a command, streaming its output lines to `onLine`; `signal` aborts it. */
export function runCommand(command: string, args: readonly string[], onLine: (line: string) => void, signal?: AbortSignal): Promise<CommandResult> {
    return new Promise((resolve) => {
        let output = '';
        let cancelled = false;
        const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
        const onAbort = () => {
            cancelled = true;
            child.kill();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const collect = (chunk: Buffer) => {
            const text = chunk.toString();
            output += text;
            text.split(/\r?\n/).filter((l) => l.trim() !== '').forEach(onLine);
        };
        child.stdout.on('data', collect);
        child.stderr.on('data', collect);
        child.on('error', (err) => {
            signal?.removeEventListener('abort', onAbort);
            resolve({ ok: false, cancelled, output: output + err.message });
        });
        child.on('close', (code) => {
            signal?.removeEventListener('abort', onAbort);
            resolve({ ok: code === 0 && !cancelled, cancelled, output });
        });
    });
}

/** `<python> -m pip install <wheel>`: the "Install tfperf" button. */
export function pipInstallArgs(wheel: string): string[] {
    return ['-m', 'pip', 'install', '--disable-pip-version-check', wheel];
}
