// The status bar item: server state and benchmark device; a click shows the log.
import * as vscode from 'vscode';
import { StatusView } from '../core/status';

export class StatusBar implements vscode.Disposable {
    private readonly item = vscode.window.createStatusBarItem('tfperf.status', vscode.StatusBarAlignment.Right, 100);

    constructor() {
        this.item.name = 'tfperf';
        this.item.command = 'tfperf.showOutput';
        this.item.show();
    }

    update(view: StatusView): void {
        this.item.text = view.text;
        const tooltip = new vscode.MarkdownString(view.tooltip, true);
        this.item.tooltip = tooltip;
        this.item.backgroundColor = view.severity === 'normal'
            ? undefined
            : new vscode.ThemeColor(view.severity === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    }

    dispose(): void {
        this.item.dispose();
    }
}
