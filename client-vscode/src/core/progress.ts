// Where to show the server's work-done progress. vscode-languageclient shows all of it in the
// status bar, where Cancel is not offered; benchmarks (the cancellable, long-running kind) belong in
// a notification with a Cancel button. Pure.

export type ProgressPlace = 'notification' | 'window';

export function progressPlace(begin: { cancellable?: boolean; title?: string }): ProgressPlace {
    return begin.cancellable === true ? 'notification' : 'window';
}

/** VS Code wants increments; LSP sends absolute percentages. Returns the increment and the new total. */
export function progressIncrement(reported: number, percentage: number | undefined): { increment: number; total: number } {
    if (percentage === undefined || !Number.isFinite(percentage)) {
        return { increment: 0, total: reported };
    }
    const clamped = Math.max(0, Math.min(100, percentage));
    const increment = Math.max(0, clamped - reported);
    return { increment, total: reported + increment };
}
