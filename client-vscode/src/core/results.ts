// The `tfperf/benchmarkResult` notification (docs/contract.md) -> a short message. Pure.

export interface BenchmarkResult {
    uri: string;
    findingId: string;
    code: string;
    verdict: string;
    summary: string;
}

export function parseBenchmarkResult(value: unknown): BenchmarkResult | undefined {
    if (typeof value !== 'object' || value === null) {
        return undefined;
    }
    const v = value as Record<string, unknown>;
    if (typeof v.uri !== 'string' || typeof v.findingId !== 'string') {
        return undefined;
    }
    const s = (x: unknown) => (typeof x === 'string' ? x : '');
    return { uri: v.uri, findingId: v.findingId, code: s(v.code), verdict: s(v.verdict), summary: s(v.summary) };
}

/** "tfperf TFP101 (model.py): 3.1x faster ..." - the verdict is only added when the summary lacks it. */
export function resultMessage(result: BenchmarkResult, fileName: string): string {
    const head = `tfperf ${result.code || 'benchmark'} (${fileName})`;
    const summary = result.summary.trim();
    if (summary === '') {
        return `${head}: ${result.verdict || 'done'}.`;
    }
    const mentionsVerdict = result.verdict !== '' && summary.toLowerCase().includes(result.verdict.toLowerCase());
    return mentionsVerdict || result.verdict === '' ? `${head}: ${summary}` : `${head}: ${result.verdict}. ${summary}`;
}

/** Errors deserve a warning toast; the rest are informational. */
export function resultSeverity(result: BenchmarkResult): 'info' | 'warning' {
    return /error|fail|timeout|mismatch/i.test(result.verdict) ? 'warning' : 'info';
}
