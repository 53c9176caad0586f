// tfperf findings as published in diagnostics (docs/contract.md: source "tfperf", data.id, ...). Pure:
// works on a structural subset of vscode.Diagnostic so tests can build plain objects.

export interface Pos { line: number; character: number }
export interface RangeLike { start: Pos; end: Pos }
export interface DiagnosticLike {
    range: RangeLike;
    source?: string;
    code?: string | number | { value: string | number; target?: unknown };
    data?: unknown;
}

export interface Finding {
    id: string;
    code: string;
    fixable: boolean;
    benchmarkable: boolean;
    range: RangeLike;
}

/** vscode.Diagnostic drops unknown LSP fields; the client copies `data` over (see client.ts). */
export function toFinding(d: DiagnosticLike): Finding | undefined {
    if (d.source !== 'tfperf' || typeof d.data !== 'object' || d.data === null) {
        return undefined;
    }
    const data = d.data as Record<string, unknown>;
    if (typeof data.id !== 'string') {
        return undefined;
    }
    const code = typeof data.code === 'string' ? data.code : codeOf(d) ?? '';
    return { id: data.id, code, fixable: data.fixable === true, benchmarkable: data.benchmarkable === true, range: d.range };
}

export function codeOf(d: DiagnosticLike): string | undefined {
    if (d.code === undefined) {
        return undefined;
    }
    return typeof d.code === 'object' ? String(d.code.value) : String(d.code);
}

export function findingsIn(diagnostics: readonly DiagnosticLike[]): Finding[] {
    return diagnostics.map(toFinding).filter((f): f is Finding => f !== undefined);
}

function contains(range: RangeLike, pos: Pos): boolean {
    const afterStart = pos.line > range.start.line || (pos.line === range.start.line && pos.character >= range.start.character);
    const beforeEnd = pos.line < range.end.line || (pos.line === range.end.line && pos.character <= range.end.character);
    return afterStart && beforeEnd;
}

/**
 * The finding the user means at `pos`: one whose range contains the cursor, else one on the
 * cursor's line (squiggles are narrow; people put the cursor anywhere on the line). Smallest wins.
 */
export function findingAt(findings: readonly Finding[], pos: Pos, predicate: (f: Finding) => boolean = () => true): Finding | undefined {
    const candidates = findings.filter(predicate);
    const size = (f: Finding) => (f.range.end.line - f.range.start.line) * 100000 + (f.range.end.character - f.range.start.character);
    const bySize = (a: Finding, b: Finding) => size(a) - size(b);
    const containing = candidates.filter((f) => contains(f.range, pos)).sort(bySize);
    if (containing.length > 0) {
        return containing[0];
    }
    return candidates.filter((f) => f.range.start.line <= pos.line && pos.line <= f.range.end.line).sort(bySize)[0];
}

/** Distinct rule codes, in order of first appearance. */
export function ruleCodes(findings: readonly Finding[]): string[] {
    return [...new Set(findings.map((f) => f.code).filter((c) => c !== ''))];
}
