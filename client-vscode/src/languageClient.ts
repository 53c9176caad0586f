// Builds the LanguageClient that runs `<python> server/tfperf_server.py` (docs/contract.md, "Launch").
import * as readline from 'readline';
import { Readable } from 'stream';
import * as vscode from 'vscode';
import {
    CloseAction,
    ErrorAction,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
} from 'vscode-languageclient/node';
import { ServerSettings } from './core/settings';
import { BenchmarkProgress } from './ui/benchmarkProgress';

export interface ClientParts {
    interpreter: string;
    launcher: string; // path of tfperf_server.py
    /** Added to the server's environment (tfperf.importStrategy useBundled: PYTHONPATH = bundled/libs). */
    env: Record<string, string>;
    cwd: string;
    log: vscode.LogOutputChannel;
    settings: () => ServerSettings;
    progress: BenchmarkProgress;
    /** Returns false to stop a server command (e.g. a benchmark in Restricted Mode). */
    allowCommand: (command: string) => boolean;
    /** The server exited without being asked to; true = restart it. */
    onCrash: () => boolean;
    /** Each line the server writes to stderr (also logged). */
    onStderr: (line: string) => void;
}

/** Log a stream line by line; stderr lines also go to `onLine` (start-up failures are explained from them). */
function pipeLines(level: 'info' | 'error', onLine?: (line: string) => void) {
    return (input: Readable, channel: vscode.OutputChannel) => {
        readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', (line) => {
            const log = channel as vscode.LogOutputChannel;
            if (level === 'error') {
                log.error(line);
            } else {
                log.info(line);
            }
            onLine?.(line);
        });
    };
}

export function createLanguageClient(parts: ClientParts): LanguageClient {
    const serverOptions: ServerOptions = {
        command: parts.interpreter,
        args: [parts.launcher],
        options: {
            cwd: parts.cwd,
            // UTF-8 on every platform; unbuffered so the log shows a crash's last words.
            env: { ...process.env, ...parts.env, PYTHONUTF8: '1', PYTHONUNBUFFERED: '1' },
        },
    };
    const clientOptions: LanguageClientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
            // Jupyter notebook cells (VS Code's built-in notebooks): the server gets LSP 3.17 notebook sync.
            { notebook: 'jupyter-notebook', language: 'python' },
        ],
        outputChannel: parts.log,
        stdioOptions: { stdout: pipeLines('info'), stderr: pipeLines('error', parts.onStderr) },
        traceOutputChannel: parts.log,
        revealOutputChannelOn: RevealOutputChannelOn.Never, // our notices offer "Show Log" instead
        initializationOptions: parts.settings(),
        initializationFailedHandler: () => false, // no retry loop on a failed initialize
        errorHandler: {
            error: (_error, _message, count) => ({ action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
            closed: () => (parts.onCrash()
                ? { action: CloseAction.Restart, handled: true }
                : { action: CloseAction.DoNotRestart, handled: true }),
        },
        middleware: {
            workspace: {
                // The server pulls the `tfperf` section; answer in the contract's shape, not the raw settings tree.
                configuration: async (params, token, next) => {
                    const raw = await next(params, token);
                    if (!Array.isArray(raw)) {
                        return raw;
                    }
                    return params.items.map((item, i) => (item.section === 'tfperf' ? parts.settings() : raw[i]));
                },
            },
            handleWorkDoneProgress: parts.progress.middleware,
            executeCommand: async (command, args, next) => (parts.allowCommand(command) ? next(command, args) : undefined),
        },
    };
    return new LanguageClient('tfperf', 'tfperf', serverOptions, clientOptions);
}
