// The server's lifecycle: choose the interpreter, probe it, start/stop/restart the client, keep the
// status bar in step, and never crash-loop.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { DidChangeConfigurationNotification, LanguageClient, State, WorkDoneProgressCancelNotification } from 'vscode-languageclient/node';
import { firstFolder, importStrategySetting, interpreterSetting, readServerSettings } from './config';
import { CoalescingRunner } from './core/coalescingRunner';
import { CrashTracker } from './core/crashTracker';
import { EnvReport, PlanContext, noticeForStartFailure, parseEnvReport, planFromProbe } from './core/envCheck';
import { BundleManifest, LaunchPlan, checkBundleFits, parseBundleManifest, planLaunch } from './core/launch';
import { chooseInterpreter } from './core/interpreter';
import { Notice, notices } from './core/notices';
import { BenchmarkResult, parseBenchmarkResult } from './core/results';
import { Phase, ServerStatus, mergeStatus, parseServerStatus, statusView } from './core/status';
import { CODE_RUNNING_COMMANDS, benchmarkBlocked, interpreterBlocked } from './core/trust';
import { createLanguageClient } from './languageClient';
import { pipInstallArgs, runCommand, runProbe } from './node/processes';
import { activeInterpreter, pythonExtensionInstalled } from './python';
import { BenchmarkProgress } from './ui/benchmarkProgress';
import { NoticePresenter } from './ui/noticePresenter';
import { StatusBar } from './ui/statusBar';

export interface Bundle {
    /** Folder holding tfperf_server.py and check_env.py. */
    serverDir: string;
    /** The tfperf wheel shipped in the .vsix, if any. */
    wheel?: string;
    /** bundled/libs: tfperf and its libraries for tfperf.importStrategy "useBundled", if this build has them. */
    libs?: string;
    /** bundled/bundle.json: the platform and Python version bundled/libs fits. */
    manifest?: BundleManifest;
}

/** The .vsix ships server/ and bundled/; a development checkout uses the repository's server/. */
export function locateBundle(extensionPath: string): Bundle {
    const inside = path.join(extensionPath, 'server');
    const serverDir = fs.existsSync(path.join(inside, 'tfperf_server.py')) ? inside : path.join(extensionPath, '..', 'server');
    const bundled = path.join(extensionPath, 'bundled');
    const wheels = fs.existsSync(bundled) ? fs.readdirSync(bundled).filter((f) => /^tfperf-.*\.whl$/.test(f)).sort() : [];
    const libs = path.join(bundled, 'libs');
    let manifest: BundleManifest | undefined;
    try {
        manifest = parseBundleManifest(fs.readFileSync(path.join(bundled, 'bundle.json'), 'utf8'));
    } catch {
        manifest = undefined; // no bundle in this build (a development checkout, or packaged without it)
    }
    return {
        serverDir,
        wheel: wheels.length > 0 ? path.join(bundled, wheels[wheels.length - 1]) : undefined,
        libs: manifest !== undefined && fs.existsSync(path.join(libs, 'tfperf_lsp')) ? libs : undefined,
        manifest,
    };
}

export class ServerManager implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private phase: Phase = 'stopped';
    private detail: string | undefined;
    private serverStatus: ServerStatus | undefined;
    private report: EnvReport | undefined;
    private interpreter: string | undefined;
    private launch: LaunchPlan | undefined;
    private stopping = false;
    private reachedRunning = false; // the current client completed initialize at least once
    private stderrTail: string[] = [];
    private readonly crashes = new CrashTracker();
    private readonly runner = new CoalescingRunner(() => this.restartNow());
    private readonly progress = new BenchmarkProgress((token) => {
        void this.client?.sendNotification(WorkDoneProgressCancelNotification.type, { token }).catch(() => undefined);
    });
    private readonly resultEmitter = new vscode.EventEmitter<BenchmarkResult>();
    /** Fires for each `tfperf/benchmarkResult` notification. */
    readonly onBenchmarkResult = this.resultEmitter.event;

    constructor(
        private readonly bundle: Bundle,
        private readonly log: vscode.LogOutputChannel,
        private readonly statusBar: StatusBar,
        private readonly presenter: NoticePresenter,
    ) {
        this.render();
    }

    get running(): LanguageClient | undefined {
        return this.client?.state === State.Running ? this.client : undefined;
    }

    get currentInterpreter(): string | undefined {
        return this.interpreter;
    }

    /** A deliberate restart (command, setting, interpreter change): forgives earlier crashes. */
    restart(): Promise<void> {
        this.crashes.reset();
        return this.runner.request();
    }

    /** Sends the current settings; the server re-reads them without restarting. */
    async sendSettings(): Promise<void> {
        const { settings, problems } = readServerSettings();
        if (problems.length > 0) {
            void this.presenter.show(notices.settingsProblems(problems));
        }
        this.render();
        const client = this.running;
        if (client !== undefined) {
            await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { tfperf: settings } });
        }
    }

    /** Whether a server command may run now; shows why not. */
    allowCommand(command: string): boolean {
        if (!CODE_RUNNING_COMMANDS.has(command)) {
            return true;
        }
        const blocked = benchmarkBlocked(vscode.workspace.isTrusted);
        if (blocked !== undefined) {
            void this.presenter.show(blocked);
            return false;
        }
        return true;
    }

    /** `<interpreter> -m pip install <bundled wheel>`, then start again. */
    async installTfperf(): Promise<void> {
        const python = this.interpreter;
        if (python === undefined || this.bundle.wheel === undefined) {
            return;
        }
        this.log.info(`Installing ${this.bundle.wheel} into ${python}`);
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: `Installing tfperf into ${python}`, cancellable: true },
            (progress, token) => {
                const abort = new AbortController();
                token.onCancellationRequested(() => abort.abort());
                return runCommand(python, pipInstallArgs(this.bundle.wheel!), (line) => {
                    this.log.info(`pip: ${line}`);
                    progress.report({ message: line.slice(0, 80) });
                }, abort.signal);
            },
        );
        if (result.cancelled) {
            this.log.warn('Installing tfperf was cancelled.');
            return;
        }
        if (!result.ok) {
            void this.presenter.show(notices.installFailed(python, result.output, pythonExtensionInstalled()));
            return;
        }
        void this.presenter.show(notices.installSucceeded(python));
        await this.restart();
    }

    /** The strategy the running server was started with. */
    get importStrategy(): LaunchPlan | undefined {
        return this.launch;
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.progress.clear();
        if (client !== undefined) {
            this.stopping = true;
            try {
                if (client.state !== State.Stopped) {
                    await client.stop(5000);
                }
            } catch (err) {
                this.log.warn(`Stopping the server: ${String(err)}`);
            } finally {
                await client.dispose().catch(() => undefined);
                this.stopping = false;
            }
        }
        this.serverStatus = undefined;
        this.setPhase('stopped');
    }

    private async restartNow(): Promise<void> {
        await this.stop();
        this.interpreter = undefined;
        this.report = undefined;
        this.launch = undefined;
        const folder = firstFolder();
        const pythonInstalled = pythonExtensionInstalled();
        const choice = chooseInterpreter({
            setting: interpreterSetting(),
            pythonExtensionPath: await activeInterpreter(folder?.uri),
            pythonExtensionInstalled: pythonInstalled,
            vars: { workspaceFolder: folder?.uri.fsPath, userHome: os.homedir(), env: process.env },
        });
        if (choice.kind === 'none') {
            return this.needsSetup(notices.noInterpreter(choice.pythonExtensionInstalled), 'No Python interpreter selected.');
        }
        if (choice.kind === 'unresolved') {
            return this.needsSetup(notices.unresolvedInterpreter(choice.setting), 'tfperf.interpreter cannot be resolved.');
        }
        this.interpreter = choice.path;
        this.log.info(`Interpreter: ${choice.path} (from ${choice.source === 'setting' ? 'tfperf.interpreter' : 'the Python extension'})`);

        const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
        const blocked = interpreterBlocked(vscode.workspace.isTrusted, choice.path, folders);
        if (blocked !== undefined) {
            return this.needsSetup(blocked, 'The interpreter is inside this untrusted folder.');
        }

        this.setPhase('starting');
        const checkEnv = path.join(this.bundle.serverDir, 'check_env.py');
        let launch = planLaunch(importStrategySetting(), this.bundle, `${process.platform}-${process.arch}`, process.env.PYTHONPATH, path.delimiter);
        this.logLaunch(launch);
        let outcome = await runProbe(choice.path, checkEnv, undefined, undefined, launch.env);
        if (launch.strategy === 'useBundled' && outcome.kind === 'ok') {
            // The bundle's binary libraries load only in the Python version they were installed for.
            const fitted = checkBundleFits(launch, this.bundle, choice.path, parseEnvReport(outcome.stdout)?.python);
            if (fitted !== launch) {
                launch = fitted;
                this.logLaunch(launch);
                outcome = await runProbe(choice.path, checkEnv);
            }
        }
        this.launch = launch;
        this.log.info(`check_env: ${JSON.stringify(outcome)}`);
        const ctx: PlanContext = { interpreter: choice.path, pythonExtensionInstalled: pythonInstalled, canInstall: this.bundle.wheel !== undefined };
        const plan = planFromProbe(outcome, ctx);
        this.report = plan.report;
        for (const notice of plan.notices) {
            void this.presenter.show(notice, choice.path);
        }
        if (!plan.start) {
            this.detail = plan.notices[0]?.text;
            this.setPhase('needsSetup');
            return;
        }
        await this.startClient(ctx, folder);
    }

    private async startClient(ctx: PlanContext, folder: vscode.WorkspaceFolder | undefined): Promise<void> {
        const interpreter = ctx.interpreter;
        const { problems } = readServerSettings();
        if (problems.length > 0) {
            void this.presenter.show(notices.settingsProblems(problems));
        }
        const client = createLanguageClient({
            interpreter,
            launcher: path.join(this.bundle.serverDir, 'tfperf_server.py'),
            env: this.launch?.env ?? {},
            cwd: folder?.uri.fsPath ?? this.bundle.serverDir,
            log: this.log,
            settings: () => readServerSettings().settings,
            progress: this.progress,
            allowCommand: (command) => this.allowCommand(command),
            onCrash: () => this.onCrash(),
            onStderr: (line) => {
                this.stderrTail.push(line);
                this.stderrTail.splice(0, Math.max(0, this.stderrTail.length - 30));
            },
        });
        this.reachedRunning = false;
        this.stderrTail = [];
        client.onNotification('tfperf/status', (params: unknown) => {
            const status = parseServerStatus(params);
            if (status !== undefined) {
                this.serverStatus = mergeStatus(this.serverStatus, status, this.report?.tensorflow);
                this.render();
            }
        });
        client.onNotification('tfperf/benchmarkResult', (params: unknown) => {
            const result = parseBenchmarkResult(params);
            if (result !== undefined) {
                this.resultEmitter.fire(result);
            }
        });
        client.onDidChangeState((e) => {
            if (e.newState === State.Running) {
                this.reachedRunning = true;
                this.setPhase('running');
            }
        });
        this.client = client;
        try {
            await client.start();
            this.setPhase('running');
        } catch (err) {
            // start() rejects when the process dies before initialize completes (e.g. an import error).
            this.log.error(`The server did not start: ${String(err)}`);
            await new Promise((r) => setTimeout(r, 200)); // let the last stderr lines arrive
            const notice = noticeForStartFailure(this.stderrTail, ctx);
            this.detail = notice.text;
            this.setPhase(notice.id === 'startFailed' ? 'failed' : 'needsSetup');
            void this.presenter.show(notice, interpreter);
        }
    }

    private onCrash(): boolean {
        // Not after a deliberate stop, and not when it never started: start() reports that once.
        if (this.stopping || !this.reachedRunning) {
            return false;
        }
        const decision = this.crashes.recordCrash();
        this.serverStatus = undefined;
        this.progress.clear();
        if (decision.restart) {
            this.log.warn(`The server exited unexpectedly (${decision.crashes} in ${this.crashes.windowMs / 60000} min); restarting it.`);
            this.setPhase('starting');
            return true;
        }
        this.detail = 'It kept exiting; see the log.';
        this.setPhase('failed');
        void this.presenter.show(notices.crashLoop(decision.crashes, this.crashes.windowMs / 60000));
        return false;
    }

    private logLaunch(launch: LaunchPlan): void {
        if (launch.strategy === 'useBundled') {
            const m = this.bundle.manifest;
            this.log.info(`Import strategy: useBundled (${this.bundle.libs}, tfperf ${m?.tfperf} for Python ${m?.python} on ${m?.platform})`);
        } else {
            this.log.info(`Import strategy: fromEnvironment${launch.requested === 'useBundled' ? ' (useBundled requested, not available)' : ''}`);
        }
        if (launch.notice !== undefined) {
            void this.presenter.show(launch.notice);
        }
    }

    private needsSetup(notice: Notice, detail: string): void {
        this.detail = detail;
        this.setPhase('needsSetup');
        void this.presenter.show(notice);
    }

    private setPhase(phase: Phase): void {
        this.phase = phase;
        if (phase === 'running' || phase === 'starting') {
            this.detail = undefined;
        }
        this.render();
    }

    render(): void {
        this.statusBar.update(statusView({
            phase: this.phase,
            server: this.serverStatus,
            workspaceTrusted: vscode.workspace.isTrusted,
            interpreter: this.interpreter,
            python: this.report?.python,
            detail: this.detail,
            configuredDevice: readServerSettings().settings.benchmark.device,
        }));
    }

    dispose(): void {
        void this.stop();
        this.resultEmitter.dispose();
    }
}
