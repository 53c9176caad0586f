// Shows a Notice as a VS Code message and runs the button the user picks.
import * as vscode from 'vscode';
import { ACTION_LABELS, ActionId, Notice, shouldNotify } from '../core/notices';

export type ActionHandlers = Record<ActionId, (notice: Notice) => unknown>;

export class NoticePresenter {
    constructor(
        private readonly memento: vscode.Memento,
        private readonly log: vscode.LogOutputChannel,
        private readonly handlers: ActionHandlers,
        /** `tfperf.showNotifications`, read at each message so a change applies at once. */
        private readonly level: () => unknown = () => 'always',
    ) {}

    /** `scope` narrows "Don't Show Again" (e.g. to one interpreter). Resolves once the user picked or dismissed. */
    async show(notice: Notice, scope = ''): Promise<void> {
        const key = `tfperf.hideNotice.${notice.id}.${scope}`;
        this.logNotice(notice);
        if (this.memento.get<boolean>(key) || !shouldNotify(this.level(), notice.severity)) {
            return;
        }
        const labels = notice.actions.map((a) => ACTION_LABELS[a]);
        const show = notice.severity === 'error'
            ? vscode.window.showErrorMessage
            : notice.severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
        const picked = await show(notice.text, ...labels);
        const action = notice.actions.find((a) => ACTION_LABELS[a] === picked);
        if (action === 'dontShowAgain') {
            await this.memento.update(key, true);
        } else if (action !== undefined) {
            await this.handlers[action](notice);
        }
    }

    private logNotice(notice: Notice): void {
        const line = `[${notice.id}] ${notice.text}`;
        if (notice.severity === 'error') {
            this.log.error(line);
        } else if (notice.severity === 'warning') {
            this.log.warn(line);
        } else {
            this.log.info(line);
        }
    }
}
