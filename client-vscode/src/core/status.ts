// Status bar text and tooltip from the client's phase and the server's `tfperf/status`
// notification (docs/contract.md). Pure.

/** The client's view of the server process. */
export type Phase = 'starting' | 'running' | 'needsSetup' | 'stopped' | 'failed';

export interface ServerStatus {
    state: 'ready' | 'analyzing' | 'benchmarking' | 'error';
    device: string | null;
    tensorflow: string | null;
    message: string | null;
}

export interface StatusInput {
    phase: Phase;
    server?: ServerStatus;
    workspaceTrusted: boolean;
    interpreter?: string;
    python?: string;
    /** Short reason shown for needsSetup/failed. */
    detail?: string;
    /** tfperf.benchmark.device, shown until the server reports the probed device. */
    configuredDevice?: string;
}

export interface StatusView {
    text: string;
    tooltip: string; // markdown
    severity: 'normal' | 'warning' | 'error';
}

/** "CPU: Intel(R) Xeon(R) ..." -> "CPU"; long names without a kind get cut. */
export function shortDevice(device: string): string {
    const colon = device.indexOf(':');
    if (colon > 0 && colon <= 8) {
        return device.slice(0, colon).trim();
    }
    return device.length > 20 ? `${device.slice(0, 19)}…` : device;
}

export function parseServerStatus(value: unknown): ServerStatus | undefined {
    if (typeof value !== 'object' || value === null) {
        return undefined;
    }
    const v = value as Record<string, unknown>;
    const states = ['ready', 'analyzing', 'benchmarking', 'error'];
    if (typeof v.state !== 'string' || !states.includes(v.state)) {
        return undefined;
    }
    const str = (x: unknown) => (typeof x === 'string' && x !== '' ? x : null);
    return { state: v.state as ServerStatus['state'], device: str(v.device), tensorflow: str(v.tensorflow), message: str(v.message) };
}

/**
 * A new `tfperf/status` on top of what we knew: a null device or TensorFlow version means "not
 * known in this message" (the server sends null for both while benchmarking), so earlier values and
 * check_env's TensorFlow version stay. Only check_env can say TensorFlow is absent.
 */
export function mergeStatus(prev: ServerStatus | undefined, next: ServerStatus, envTensorflow: string | null | undefined): ServerStatus {
    return {
        ...next,
        device: next.device ?? prev?.device ?? null,
        tensorflow: next.tensorflow ?? prev?.tensorflow ?? envTensorflow ?? null,
    };
}

export function statusView(input: StatusInput): StatusView {
    const restricted = input.workspaceTrusted ? '' : ' $(shield)';
    const lines: string[] = [];
    let text: string;
    let severity: StatusView['severity'] = 'normal';

    switch (input.phase) {
        case 'starting':
            text = '$(sync~spin) tfperf';
            lines.push('**tfperf**: starting the server…');
            break;
        case 'needsSetup':
            text = '$(warning) tfperf: setup needed';
            severity = 'warning';
            lines.push(`**tfperf**: not running. ${input.detail ?? ''}`.trim());
            break;
        case 'failed':
            text = '$(error) tfperf';
            severity = 'error';
            lines.push(`**tfperf**: the server failed. ${input.detail ?? ''}`.trim());
            break;
        case 'stopped':
            text = '$(circle-slash) tfperf';
            lines.push('**tfperf**: stopped.');
            break;
        case 'running': {
            const s = input.server;
            const device = s?.device ? shortDevice(s.device) : undefined;
            const noTf = s !== undefined && s.tensorflow === null;
            const where = noTf ? 'hints only' : device;
            switch (s?.state) {
                case 'benchmarking':
                    text = `$(loading~spin) tfperf: benchmarking${device ? ` on ${device}` : ''}`;
                    break;
                case 'analyzing':
                    text = `$(sync~spin) tfperf${where ? `: ${where}` : ''}`;
                    break;
                case 'error':
                    text = '$(error) tfperf';
                    severity = 'error';
                    break;
                default:
                    text = `$(check) tfperf${where ? `: ${where}` : ''}`;
            }
            lines.push(`**tfperf**: ${s?.state ?? 'running'}${s?.message ? ` (${s.message})` : ''}`);
            if (s?.device) {
                lines.push(`Benchmark device: ${s.device}`);
            } else if (!noTf) {
                lines.push(`Benchmark device: not probed yet (tfperf.benchmark.device: ${input.configuredDevice ?? 'auto'})`);
            }
            if (noTf) {
                lines.push('TensorFlow: not installed in this interpreter; benchmarks are unavailable');
            } else if (s?.tensorflow) {
                lines.push(`TensorFlow: ${s.tensorflow}`);
            }
            break;
        }
    }
    if (input.interpreter) {
        lines.push(`Python: \`${input.interpreter}\`${input.python ? ` (${input.python})` : ''}`);
    }
    if (!input.workspaceTrusted) {
        lines.push('Restricted Mode: hints work; benchmarks are disabled until you trust this folder');
    }
    lines.push('Click to show the log');
    return { text: text + restricted, tooltip: lines.join('\n\n'), severity };
}
