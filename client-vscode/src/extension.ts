// Entry point: wires settings, trust, the Python extension and the commands to the ServerManager.
import * as path from 'path';
import * as vscode from 'vscode';
import { registerCommands, findingsOf } from './commands';
import { Notice } from './core/notices';
import { resultMessage, resultSeverity } from './core/results';
import { RESTART_SETTINGS } from './core/settings';
import { firstFolder, interpreterSetting } from './config';
import { activeInterpreter, onActiveInterpreterChanged } from './python';
import { ServerManager, locateBundle } from './serverManager';
import { ActionHandlers, NoticePresenter } from './ui/noticePresenter';
import { StatusBar } from './ui/statusBar';

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
    const log = vscode.window.createOutputChannel('tfperf', { log: true });
    const statusBar = new StatusBar();
    // The buttons of every message; they run later, when `mgr` exists.
    const handlers: ActionHandlers = {
        installTfperf: () => mgr.installTfperf(),
        selectInterpreter: () => vscode.commands.executeCommand('python.setInterpreter'),
        openSettings: () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:tfperf.tfperf'),
        showLog: () => log.show(),
        manageTrust: () => vscode.commands.executeCommand('workbench.trust.manage'),
        restart: () => mgr.restart(),
        dontShowAgain: () => undefined, // handled by the presenter
    };
    const presenter = new NoticePresenter(context.globalState, log, handlers,
        () => vscode.workspace.getConfiguration('tfperf').get('showNotifications'));
    const mgr = new ServerManager(locateBundle(context.extensionPath), log, statusBar, presenter);
    manager = mgr;
    const show = (notice: Notice) => presenter.show(notice);

    context.subscriptions.push(
        log,
        statusBar,
        mgr,
        ...registerCommands({ manager: mgr, log, show }),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) {
                void mgr.restart();
            } else if (e.affectsConfiguration('tfperf')) {
                void mgr.sendSettings();
            }
        }),
        // Trust unlocks benchmarks (live) and possibly an interpreter inside the folder (restart).
        vscode.workspace.onDidGrantWorkspaceTrust(() => {
            if (mgr.running !== undefined) {
                void mgr.sendSettings();
            } else {
                void mgr.restart();
            }
        }),
        vscode.workspace.onDidChangeWorkspaceFolders(() => void mgr.restart()),
        mgr.onBenchmarkResult(async (result) => {
            const uri = vscode.Uri.parse(result.uri);
            const text = resultMessage(result, path.basename(uri.fsPath));
            log.info(text);
            const showFn = resultSeverity(result) === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
            // Non-error toasts with a button still auto-hide after a few seconds.
            if ((await showFn(text, 'Show in Hover')) === 'Show in Hover') {
                await showResultHover(uri, result.findingId);
            }
        }),
    );

    // Restart when the user picks another environment in the Python extension, unless
    // tfperf.interpreter pins one or the pick did not change the path (the event fires spuriously).
    // Not awaited: activating the Python extension can take seconds and must not delay our start.
    void onActiveInterpreterChanged(async () => {
        if (interpreterSetting() !== '') {
            return;
        }
        if ((await activeInterpreter(firstFolder()?.uri)) !== mgr.currentInterpreter) {
            void mgr.restart();
        }
    }).then((listener) => context.subscriptions.push(listener));

    void mgr.restart();
}

/** Opens the file at the finding and shows its hover (which carries the timings). */
async function showResultHover(uri: vscode.Uri, findingId: string): Promise<void> {
    const editor = await vscode.window.showTextDocument(uri, { preserveFocus: false });
    const finding = findingsOf(uri).find((f) => f.id === findingId);
    if (finding === undefined) {
        return;
    }
    const start = new vscode.Position(finding.range.start.line, finding.range.start.character);
    editor.selection = new vscode.Selection(start, start);
    editor.revealRange(new vscode.Range(start, start), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    await vscode.commands.executeCommand('editor.action.showHover');
}

export async function deactivate(): Promise<void> {
    await manager?.stop();
}
