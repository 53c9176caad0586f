// The extension's own commands. The server's commands (tfperf.benchmark, ...) are registered by
// vscode-languageclient under their own names, so ours use different ids.
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';
import { Finding, findingAt, findingsIn, ruleCodes } from './core/findings';
import { Notice, notices } from './core/notices';
import { benchmarkBlocked } from './core/trust';
import { ServerManager } from './serverManager';

export interface CommandDeps {
    manager: ServerManager;
    log: vscode.LogOutputChannel;
    show: (notice: Notice) => Promise<void>;
}

export function findingsOf(uri: vscode.Uri): Finding[] {
    return findingsIn(vscode.languages.getDiagnostics(uri));
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
    const { manager, log, show } = deps;

    /** Runs a server command; returns undefined (after telling the user) when it cannot. */
    const serverCommand = async (command: string, args: unknown[]): Promise<unknown> => {
        const client = manager.running;
        if (client === undefined) {
            await show(notices.serverNotRunning());
            return undefined;
        }
        try {
            return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
        } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            log.error(`${command} failed: ${message}`);
            void vscode.window.showErrorMessage(`tfperf: ${message}`);
            return undefined;
        }
    };

    const pythonEditor = (): vscode.TextEditor | undefined => {
        const editor = vscode.window.activeTextEditor;
        return editor?.document.languageId === 'python' ? editor : undefined;
    };

    const gate = async (): Promise<boolean> => {
        const blocked = benchmarkBlocked(vscode.workspace.isTrusted);
        if (blocked !== undefined) {
            await show(blocked);
            return false;
        }
        return true;
    };

    return [
        vscode.commands.registerCommand('tfperf.restart', () => manager.restart()),

        vscode.commands.registerCommand('tfperf.showOutput', () => log.show()),

        vscode.commands.registerCommand('tfperf.benchmarkAtCursor', async () => {
            if (!(await gate())) {
                return;
            }
            const editor = pythonEditor();
            const finding = editor && findingAt(findingsOf(editor.document.uri), editor.selection.active, (f) => f.benchmarkable);
            if (editor === undefined || finding === undefined) {
                await show(notices.noBenchmarkableFinding());
                return;
            }
            return serverCommand('tfperf.benchmark', [editor.document.uri.toString(), finding.id]);
        }),

        vscode.commands.registerCommand('tfperf.benchmarkAllInFile', async () => {
            if (!(await gate())) {
                return;
            }
            const editor = pythonEditor();
            if (editor === undefined || !findingsOf(editor.document.uri).some((f) => f.benchmarkable)) {
                await show(notices.noFindings());
                return;
            }
            return serverCommand('tfperf.benchmarkFile', [editor.document.uri.toString()]);
        }),

        // Runs the file with TensorFlow instrumented; the server refuses it in untrusted workspaces too.
        vscode.commands.registerCommand('tfperf.observeFile', async () => {
            if (!(await gate())) {
                return;
            }
            const editor = pythonEditor();
            if (editor === undefined) {
                return;
            }
            await editor.document.save();
            return serverCommand('tfperf.observe', [editor.document.uri.toString()]);
        }),

        // [null], not []: pygls 2 rejects a command call with fewer arguments than parameters, defaults or not.
        vscode.commands.registerCommand('tfperf.clearBenchmarkResults', () => serverCommand('tfperf.clearBenchmarks', [null])),

        vscode.commands.registerCommand('tfperf.openRuleDocs', async (code?: string) => {
            if (typeof code !== 'string') {
                code = await pickRuleCode();
            }
            return code === undefined ? undefined : serverCommand('tfperf.showRuleDocs', [code]);
        }),
    ];
}

/** The rule under the cursor, else a pick among the file's rules, else free input. */
async function pickRuleCode(): Promise<string | undefined> {
    const editor = vscode.window.activeTextEditor;
    const findings = editor ? findingsOf(editor.document.uri) : [];
    const here = editor && findingAt(findings, editor.selection.active);
    if (here !== undefined && here.code !== '') {
        return here.code;
    }
    const codes = ruleCodes(findings);
    if (codes.length > 0) {
        return vscode.window.showQuickPick(codes, { placeHolder: 'Open the documentation of which tfperf rule?' });
    }
    const typed = await vscode.window.showInputBox({ prompt: 'tfperf rule code', placeHolder: 'TFP101' });
    return typed?.trim().toUpperCase() || undefined;
}
