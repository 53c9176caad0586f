// Renders the server's cancellable work-done progress (benchmarks) as a notification with a Cancel
// button. vscode-languageclient would put it in the status bar, where VS Code shows no Cancel.
import * as vscode from 'vscode';
import { HandleWorkDoneProgressSignature, ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageclient';
import { progressIncrement, progressPlace } from '../core/progress';

type Params = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

interface Active {
    progress?: vscode.Progress<{ message?: string; increment?: number }>;
    reported: number;
    finish: () => void;
    pending: Params[]; // reports that arrive before VS Code hands us the progress object
}

export class BenchmarkProgress {
    private readonly active = new Map<ProgressToken, Active>();

    /** `cancel` sends window/workDoneProgress/cancel for the token. */
    constructor(private readonly cancel: (token: ProgressToken) => void) {}

    /** The `handleWorkDoneProgress` middleware of the language client. */
    readonly middleware = (token: ProgressToken, params: Params, next: HandleWorkDoneProgressSignature): void => {
        if (params.kind === 'begin') {
            if (progressPlace(params) === 'window') {
                return next(token, params);
            }
            this.begin(token, params);
            return; // not next(): the default handler would add a second, Cancel-less progress
        }
        const entry = this.active.get(token);
        if (entry === undefined) {
            return next(token, params);
        }
        if (params.kind === 'report') {
            this.report(entry, params);
        } else {
            this.active.delete(token);
            entry.finish();
            next(token, params); // lets the client dispose its listener for this token
        }
    };

    private begin(token: ProgressToken, params: WorkDoneProgressBegin): void {
        let finish: () => void = () => undefined;
        const done = new Promise<void>((resolve) => (finish = resolve));
        const entry: Active = { reported: 0, finish, pending: [] };
        this.active.set(token, entry);
        void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: params.title, cancellable: true },
            (progress, cancellation) => {
                entry.progress = progress;
                cancellation.onCancellationRequested(() => this.cancel(token));
                this.report(entry, { kind: 'report', message: params.message, percentage: params.percentage });
                for (const p of entry.pending.splice(0)) {
                    this.report(entry, p as WorkDoneProgressReport);
                }
                return done;
            },
        );
    }

    private report(entry: Active, params: WorkDoneProgressReport): void {
        if (entry.progress === undefined) {
            entry.pending.push(params);
            return;
        }
        const { increment, total } = progressIncrement(entry.reported, params.percentage);
        entry.reported = total;
        entry.progress.report({ message: params.message, increment: increment > 0 ? increment : undefined });
    }

    /** Closes every open notification (server stopped or restarted). */
    clear(): void {
        for (const entry of this.active.values()) {
            entry.finish();
        }
        this.active.clear();
    }
}
