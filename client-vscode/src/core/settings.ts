// VS Code `tfperf.*` settings -> the server's initializationOptions / `tfperf` configuration section
// (docs/contract.md, "initializationOptions"). Pure: the caller passes a reader over the settings.

export type Severity = 'off' | 'error' | 'warning' | 'information' | 'hint';
export type LogLevel = 'error' | 'warning' | 'info' | 'debug';

export interface ServerSettings {
    workspaceTrusted: boolean;
    rules: Record<string, Severity>;
    inlayHints: boolean;
    codeLens: boolean;
    lintOnChange: boolean;
    logLevel: LogLevel;
    benchmark: {
        timeBudget: number;
        timeout: number;
        device: string;
        maxInputMB: number;
        memoryLimitMB: number;
        workerCommand: string[];
    };
}

/** Reads one setting below `tfperf.` (e.g. "benchmark.device"); undefined when unset. */
export type SettingReader = (key: string) => unknown;

export interface MappedSettings {
    settings: ServerSettings;
    /** Human-readable complaints about values that were replaced by defaults. */
    problems: string[];
}

export const DEFAULTS: Omit<ServerSettings, 'workspaceTrusted'> = {
    rules: {},
    inlayHints: true,
    codeLens: true,
    lintOnChange: true,
    logLevel: 'info',
    benchmark: {
        timeBudget: 3.0,
        timeout: 60.0,
        device: 'auto',
        maxInputMB: 512,
        memoryLimitMB: 4096,
        workerCommand: [],
    },
};

export const MAX_TIME_BUDGET_S = 10; // the server's upper bound (contract)

const SEVERITY_ALIASES: Record<string, Severity> = {
    off: 'off', none: 'off', false: 'off',
    error: 'error',
    warning: 'warning', warn: 'warning',
    information: 'information', info: 'information',
    hint: 'hint',
};

const LOG_LEVELS: readonly LogLevel[] = ['error', 'warning', 'info', 'debug'];

/** "auto", "cpu", "gpu:N"; a bare "gpu" means the first GPU. */
export function normalizeDevice(value: unknown): string | undefined {
    if (typeof value !== 'string') {
        return undefined;
    }
    const v = value.trim().toLowerCase();
    if (v === 'gpu') {
        return 'gpu:0';
    }
    return /^(auto|cpu|gpu:\d+)$/.test(v) ? v : undefined;
}

export function toServerSettings(read: SettingReader, workspaceTrusted: boolean): MappedSettings {
    const problems: string[] = [];

    const number = (key: string, fallback: number, min: number, max: number): number => {
        const raw = read(key);
        if (raw === undefined || raw === null) {
            return fallback;
        }
        if (typeof raw !== 'number' || !Number.isFinite(raw)) {
            problems.push(`tfperf.${key} must be a number; using ${fallback}.`);
            return fallback;
        }
        if (raw < min || raw > max) {
            const clamped = Math.min(max, Math.max(min, raw));
            problems.push(`tfperf.${key} = ${raw} is outside ${min}..${max}; using ${clamped}.`);
            return clamped;
        }
        return raw;
    };

    const bool = (key: string, fallback: boolean): boolean => {
        const raw = read(key);
        if (raw === undefined || raw === null) {
            return fallback;
        }
        if (typeof raw !== 'boolean') {
            problems.push(`tfperf.${key} must be true or false; using ${fallback}.`);
            return fallback;
        }
        return raw;
    };

    const rules: Record<string, Severity> = {};
    const rawRules = read('rules');
    if (rawRules !== undefined && rawRules !== null) {
        if (typeof rawRules !== 'object' || Array.isArray(rawRules)) {
            problems.push('tfperf.rules must be an object such as {"TFP101": "off"}; ignoring it.');
        } else {
            for (const [code, value] of Object.entries(rawRules as Record<string, unknown>)) {
                if (value === true) {
                    continue; // `true` = on, with the rule's default severity
                }
                const severity = value === false ? 'off' : SEVERITY_ALIASES[String(value).trim().toLowerCase()];
                if (severity === undefined) {
                    problems.push(`tfperf.rules.${code}: "${String(value)}" is not one of off, error, warning, information, hint; ignoring it.`);
                    continue;
                }
                rules[code.trim().toUpperCase()] = severity;
            }
        }
    }

    let logLevel = DEFAULTS.logLevel;
    const rawLevel = read('logLevel');
    if (rawLevel !== undefined && rawLevel !== null) {
        const level = String(rawLevel).toLowerCase() === 'warn' ? 'warning' : String(rawLevel).toLowerCase();
        if ((LOG_LEVELS as readonly string[]).includes(level)) {
            logLevel = level as LogLevel;
        } else {
            problems.push(`tfperf.logLevel "${String(rawLevel)}" is not one of ${LOG_LEVELS.join(', ')}; using ${DEFAULTS.logLevel}.`);
        }
    }

    let device = DEFAULTS.benchmark.device;
    const rawDevice = read('benchmark.device');
    if (rawDevice !== undefined && rawDevice !== null && rawDevice !== '') {
        const normalized = normalizeDevice(rawDevice);
        if (normalized === undefined) {
            problems.push(`tfperf.benchmark.device "${String(rawDevice)}" is not auto, cpu or gpu:N; using auto.`);
        } else {
            device = normalized;
        }
    }

    let workerCommand: string[] = [];
    const rawCommand = read('benchmark.workerCommand');
    if (rawCommand !== undefined && rawCommand !== null) {
        if (Array.isArray(rawCommand) && rawCommand.every((part) => typeof part === 'string')) {
            workerCommand = (rawCommand as string[]).filter((part) => part.trim() !== '');
        } else {
            problems.push('tfperf.benchmark.workerCommand must be a list of strings, e.g. ["ssh", "gpu-box", "python3"]; ignoring it.');
        }
    }

    return {
        settings: {
            workspaceTrusted,
            rules,
            inlayHints: bool('inlayHints', DEFAULTS.inlayHints),
            codeLens: bool('codeLens', DEFAULTS.codeLens),
            lintOnChange: bool('lintOnChange', DEFAULTS.lintOnChange),
            logLevel,
            benchmark: {
                timeBudget: number('benchmark.timeBudget', DEFAULTS.benchmark.timeBudget, 0.1, MAX_TIME_BUDGET_S),
                timeout: number('benchmark.timeout', DEFAULTS.benchmark.timeout, 1, 3600),
                device,
                maxInputMB: number('benchmark.maxInputMB', DEFAULTS.benchmark.maxInputMB, 1, 1024 * 1024),
                memoryLimitMB: number('benchmark.memoryLimitMB', DEFAULTS.benchmark.memoryLimitMB, 256, 1024 * 1024),
                workerCommand,
            },
        },
        problems,
    };
}

/** Settings whose change needs a new server process; everything else is sent live. */
export const RESTART_SETTINGS: readonly string[] = ['tfperf.interpreter'];
