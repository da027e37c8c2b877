// The amplidex extension: it runs `amplidex lsp` for the files of Amplifier
// collections, shows the effective (merged) profile of the profile being
// edited, runs `amplidex check` into the Problems panel and shows the
// daemon's state in the status bar.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
	LanguageClient,
	LanguageClientOptions,
	RequestType,
	ServerOptions,
	TextDocumentIdentifier,
} from 'vscode-languageclient/node';

const installCommand = 'go install github.com/amplidex/amplidex/cmd/amplidex@latest';

// amplidex/mergedProfile: the effective profile of a profile, merged by the
// language server over the unsaved buffers.
interface MergedProfileParams {
	textDocument: TextDocumentIdentifier;
}
interface MergedProfile {
	uri: string;
	text: string;
	complete: boolean;
	problem?: string;
	chain: { id: string; uri: string }[];
	sources: { line: number; key: string[]; from: string[] }[];
}
const mergedProfileRequest = new RequestType<MergedProfileParams, MergedProfile, void>('amplidex/mergedProfile');

const mergedScheme = 'amplidex-merged';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
	const output = vscode.window.createOutputChannel('amplidex', { log: true });
	const statusOutput = vscode.window.createOutputChannel('amplidex status');
	const checks = vscode.languages.createDiagnosticCollection('amplidex check');
	const merged = new MergedProfiles(() => client);
	const status = new StatusItem();
	context.subscriptions.push(output, statusOutput, checks, merged, status);

	context.subscriptions.push(
		vscode.workspace.registerTextDocumentContentProvider(mergedScheme, merged),
		vscode.languages.registerDocumentLinkProvider({ scheme: mergedScheme }, merged),
		vscode.workspace.onDidChangeTextDocument((e) => merged.sourceChanged(e.document)),
		vscode.commands.registerCommand('amplidex.restartServer', async () => {
			await stopClient();
			await startClient(output);
			status.refresh();
		}),
		vscode.commands.registerCommand('amplidex.showStatus', () => showStatus(statusOutput)),
		vscode.commands.registerCommand('amplidex.check', () => checkWorkspace(checks)),
		vscode.commands.registerCommand('amplidex.showMergedProfile', (uri?: vscode.Uri) => merged.show(uri)),
		// Trusted, the workspace's own amplidex.path and amplidex.env
		// apply (they are restricted settings until then).
		vscode.workspace.onDidGrantWorkspaceTrust(async () => {
			await stopClient();
			await startClient(output);
			status.refresh();
		}),
		vscode.workspace.onDidChangeConfiguration(async (e) => {
			if (e.affectsConfiguration('amplidex.path') || e.affectsConfiguration('amplidex.env')) {
				await stopClient();
				await startClient(output);
			}
			if (e.affectsConfiguration('amplidex')) {
				status.refresh();
			}
		}),
	);
	await startClient(output);
	status.refresh();
}

export function deactivate(): Thenable<void> | undefined {
	return stopClient();
}

// settings reads the extension's configuration.
function settings() {
	const c = vscode.workspace.getConfiguration('amplidex');
	return {
		path: c.get<string>('path') || 'amplidex',
		env: c.get<Record<string, string>>('env') ?? {},
		statusInterval: c.get<number>('statusInterval') ?? 10,
	};
}

// environment is the extension host's environment with amplidex.env on top.
function environment(): NodeJS.ProcessEnv {
	return { ...process.env, ...settings().env };
}

// findBinary resolves amplidex.path: a path is taken as it is (relative to
// the first workspace folder once the workspace is trusted, else to the
// home directory, so that an untrusted repository cannot hold the program
// a relative path names), a bare name is looked up on PATH, then where `go
// install` puts binaries. It returns undefined when there is none.
//
// In an untrusted workspace VS Code gives amplidex.path and amplidex.env
// the user's values, never the workspace's: package.json lists them in
// capabilities.untrustedWorkspaces.restrictedConfigurations.
function findBinary(): string | undefined {
	const configured = settings().path;
	const env = environment();
	const executable = (p: string) => {
		try {
			fs.accessSync(p, fs.constants.X_OK);
			return fs.statSync(p).isFile();
		} catch {
			return false;
		}
	};
	const ext = process.platform === 'win32' ? ['.exe', ''] : [''];
	if (configured.includes('/') || configured.includes('\\')) {
		const folder = vscode.workspace.isTrusted ? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath : undefined;
		const base = folder ?? os.homedir();
		const p = path.resolve(base, configured.replace(/^~(?=[/\\])/, os.homedir()));
		return ext.map((e) => p + e).find(executable);
	}
	const dirs = (env.PATH ?? '').split(path.delimiter).filter((d) => d !== '');
	if (env.GOBIN) {
		dirs.push(env.GOBIN);
	}
	for (const gopath of (env.GOPATH ?? path.join(os.homedir(), 'go')).split(path.delimiter)) {
		if (gopath) {
			dirs.push(path.join(gopath, 'bin'));
		}
	}
	for (const d of dirs) {
		for (const e of ext) {
			const p = path.join(d, configured + e);
			if (executable(p)) {
				return p;
			}
		}
	}
	return undefined;
}

// missingBinary says that amplidex cannot be found, and how to get it.
async function missingBinary(): Promise<void> {
	const choice = await vscode.window.showErrorMessage(
		`amplidex: cannot find the amplidex binary ("amplidex.path" is "${settings().path}"). ` +
			`Install it with \`${installCommand}\`, or set "amplidex.path".`,
		'Copy Install Command',
		'Open Settings',
	);
	if (choice === 'Copy Install Command') {
		await vscode.env.clipboard.writeText(installCommand);
	} else if (choice === 'Open Settings') {
		await vscode.commands.executeCommand('workbench.action.openSettings', 'amplidex.path');
	}
}

async function startClient(output: vscode.LogOutputChannel): Promise<void> {
	const command = findBinary();
	if (!command) {
		void missingBinary();
		return;
	}
	const run = { command, args: ['lsp'], options: { env: environment() } };
	const serverOptions: ServerOptions = { run, debug: run };
	const clientOptions: LanguageClientOptions = {
		// Broad: the server decides what it serves and ignores the rest.
		documentSelector: [
			{ scheme: 'file', language: 'markdown' },
			{ scheme: 'file', pattern: '**/pyproject.toml' },
			{ scheme: 'file', pattern: '**/collections.lock' },
		],
		outputChannel: output,
	};
	client = new LanguageClient('amplidex', 'amplidex', serverOptions, clientOptions);
	try {
		await client.start();
	} catch (err) {
		output.error(`amplidex lsp did not start: ${err}`);
		void vscode.window.showErrorMessage(`amplidex: the language server did not start: ${err}`);
	}
}

async function stopClient(): Promise<void> {
	const c = client;
	client = undefined;
	if (c) {
		try {
			await c.stop();
		} catch {
			// A server that did not start has nothing to stop.
		}
	}
}

// NotFound is the error of runAmplidex when there is no binary to run.
class NotFound extends Error {}

// runAmplidex runs the binary with args in cwd (else the first workspace
// folder) and returns what it printed and its exit code.
function runAmplidex(args: string[], cwd?: string): Promise<{ stdout: string; stderr: string; code: number }> {
	const bin = findBinary();
	if (!bin) {
		return Promise.reject(new NotFound(`cannot find the amplidex binary ("amplidex.path" is "${settings().path}")`));
	}
	const dir = cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
	return new Promise((resolve, reject) => {
		execFile(bin, args, { cwd: dir, env: environment(), timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
			if (err && typeof err.code !== 'number') {
				reject(err);
				return;
			}
			resolve({ stdout, stderr, code: err ? (err.code as number) : 0 });
		});
	});
}

// failed says why a command could not run amplidex.
function failed(what: string, err: unknown): void {
	if (err instanceof NotFound) {
		void missingBinary();
	} else {
		void vscode.window.showErrorMessage(`${what}: ${err instanceof Error ? err.message : String(err)}`);
	}
}

async function showStatus(out: vscode.OutputChannel): Promise<void> {
	try {
		const r = await runAmplidex(['status']);
		out.clear();
		out.append(r.stdout);
		if (r.stderr) {
			out.append(r.stderr);
		}
		out.show(true);
	} catch (err) {
		failed('amplidex status', err);
	}
}

// A diagnostic as `amplidex check --format json` prints it.
interface CheckDiagnostic {
	code: string;
	severity: 'error' | 'warning' | 'info';
	path: string;
	range: { start: { line: number; character: number }; end: { line: number; character: number } };
	message: string;
	collection?: string;
}

// checkWorkspace runs `amplidex check --format json` in every workspace
// folder and puts what it reports in the Problems panel, apart from the
// language server's diagnostics.
async function checkWorkspace(checks: vscode.DiagnosticCollection): Promise<void> {
	const folders = vscode.workspace.workspaceFolders ?? [];
	if (folders.length === 0) {
		void vscode.window.showWarningMessage('amplidex check: open a folder first.');
		return;
	}
	await vscode.window.withProgress(
		{ location: vscode.ProgressLocation.Window, title: 'amplidex check' },
		async () => {
			checks.clear();
			const byFile = new Map<string, vscode.Diagnostic[]>();
			let errors = 0;
			for (const folder of folders) {
				let r;
				try {
					r = await runAmplidex(['check', '--format', 'json'], folder.uri.fsPath);
				} catch (err) {
					failed('amplidex check', err);
					return;
				}
				// 0: clean, 1: problems found; anything else is a failure,
				// said in the JSON error and on stderr.
				let parsed: { diagnostics?: CheckDiagnostic[]; error?: { message: string } };
				try {
					parsed = JSON.parse(r.stdout);
				} catch {
					void vscode.window.showErrorMessage(`amplidex check in ${folder.name} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
					continue;
				}
				if (parsed.error) {
					void vscode.window.showErrorMessage(`amplidex check in ${folder.name}: ${parsed.error.message}`);
					continue;
				}
				for (const d of parsed.diagnostics ?? []) {
					const range = new vscode.Range(d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character);
					const diag = new vscode.Diagnostic(range, d.message, severity(d.severity));
					diag.source = 'amplidex check';
					diag.code = d.code;
					const list = byFile.get(d.path) ?? [];
					list.push(diag);
					byFile.set(d.path, list);
					if (d.severity === 'error') {
						errors++;
					}
				}
			}
			for (const [file, diags] of byFile) {
				checks.set(vscode.Uri.file(file), diags);
			}
			const total = [...byFile.values()].reduce((n, l) => n + l.length, 0);
			void vscode.window.setStatusBarMessage(`amplidex check: ${total} problem${total === 1 ? '' : 's'} (${errors} error${errors === 1 ? '' : 's'})`, 10_000);
			if (total > 0) {
				await vscode.commands.executeCommand('workbench.actions.view.problems');
			}
		},
	);
}

function severity(s: string): vscode.DiagnosticSeverity {
	switch (s) {
		case 'error':
			return vscode.DiagnosticSeverity.Error;
		case 'warning':
			return vscode.DiagnosticSeverity.Warning;
		default:
			return vscode.DiagnosticSeverity.Information;
	}
}

// MergedProfiles serves the read-only documents of the amplidex-merged
// scheme: amplidex-merged:<profile path>.merged.yaml?<profile URI>. Each
// shows what the language server merges for the profile, and is asked
// again, debounced, when a profile changes (a parent's edit changes its
// children).
class MergedProfiles implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider, vscode.Disposable {
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;
	private readonly last = new Map<string, MergedProfile>();
	private timer: NodeJS.Timeout | undefined;

	constructor(private readonly getClient: () => LanguageClient | undefined) {}

	dispose(): void {
		clearTimeout(this.timer);
		this.changed.dispose();
	}

	static uriFor(source: vscode.Uri): vscode.Uri {
		return vscode.Uri.from({ scheme: mergedScheme, path: source.path + '.merged.yaml', query: source.toString() });
	}

	async show(uri?: vscode.Uri): Promise<void> {
		const source = uri ?? vscode.window.activeTextEditor?.document.uri;
		if (!source || source.scheme !== 'file' || !/[\\/]profiles[\\/][^\\/]+\.md$/.test(source.fsPath)) {
			void vscode.window.showWarningMessage('amplidex: open a profile (profiles/*.md) to see its merged profile.');
			return;
		}
		const doc = await vscode.workspace.openTextDocument(MergedProfiles.uriFor(source));
		await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false, preserveFocus: true });
	}

	async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
		const c = this.getClient();
		if (!c || !c.isRunning()) {
			return '# amplidex: the language server is not running.\n';
		}
		try {
			const res = await c.sendRequest(mergedProfileRequest, { textDocument: { uri: uri.query } }, token);
			this.last.set(uri.toString(), res);
			return res.text;
		} catch (err) {
			return `# amplidex: ${err instanceof Error ? err.message : String(err)}\n`;
		}
	}

	// sourceChanged refreshes the open merged profiles, 300 ms after the
	// last edit of a profile.
	sourceChanged(doc: vscode.TextDocument): void {
		if (doc.uri.scheme !== 'file' || !/[\\/]profiles[\\/][^\\/]+\.md$/.test(doc.uri.fsPath)) {
			return;
		}
		clearTimeout(this.timer);
		this.timer = setTimeout(() => {
			for (const d of vscode.workspace.textDocuments) {
				if (d.uri.scheme === mergedScheme) {
					this.changed.fire(d.uri);
				}
			}
		}, 300);
	}

	// provideDocumentLinks links each profile a "# from" comment names to
	// its file.
	provideDocumentLinks(doc: vscode.TextDocument): vscode.DocumentLink[] {
		const res = this.last.get(doc.uri.toString());
		if (!res) {
			return [];
		}
		const files = new Map(res.chain.map((l) => [l.id, vscode.Uri.parse(l.uri)]));
		const links: vscode.DocumentLink[] = [];
		for (const s of res.sources) {
			if (s.line >= doc.lineCount) {
				continue;
			}
			const text = doc.lineAt(s.line).text;
			const at = text.lastIndexOf('# from ');
			if (at < 0) {
				continue;
			}
			let col = at + '# from '.length;
			for (const id of s.from) {
				const start = text.indexOf(id, col);
				const target = files.get(id);
				if (start < 0) {
					break;
				}
				if (target) {
					const link = new vscode.DocumentLink(new vscode.Range(s.line, start, s.line, start + id.length), target);
					link.tooltip = `Open ${id}`;
					links.push(link);
				}
				col = start + id.length;
			}
		}
		return links;
	}
}

// StatusItem shows the daemon's state in the status bar, from `amplidex
// status --json`, asked every amplidex.statusInterval seconds.
class StatusItem implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('amplidex.status', vscode.StatusBarAlignment.Left, 0);
	private timer: NodeJS.Timeout | undefined;
	private running = false;

	constructor() {
		this.item.name = 'amplidex';
		this.item.command = 'amplidex.showStatus';
		this.item.text = '$(database) amplidex';
		this.item.show();
	}

	dispose(): void {
		clearTimeout(this.timer);
		this.item.dispose();
	}

	refresh(): void {
		clearTimeout(this.timer);
		void this.poll();
	}

	private async poll(): Promise<void> {
		if (this.running) {
			return;
		}
		this.running = true;
		try {
			const r = await runAmplidex(['status', '--json']);
			this.show(JSON.parse(r.stdout));
		} catch (err) {
			this.item.text = '$(warning) amplidex';
			this.item.tooltip = `amplidex: ${err instanceof Error ? err.message : 'cannot run `amplidex status`'}`;
		} finally {
			this.running = false;
		}
		const every = settings().statusInterval;
		if (every > 0) {
			this.timer = setTimeout(() => void this.poll(), every * 1000);
		}
	}

	private show(s: {
		running?: boolean;
		pid?: number;
		uptime?: string;
		scanning?: boolean;
		progress?: { phase: string; files: number; collections: number };
		roots?: { collections: number }[];
		message?: string;
	}): void {
		if (s.running === false) {
			this.item.text = '$(circle-slash) amplidex';
			this.item.tooltip = `amplidex: no daemon runs${s.message ? `: ${s.message}` : ''}`;
			return;
		}
		if (s.scanning) {
			const p = s.progress;
			this.item.text = `$(sync~spin) amplidex: scanning${p ? ` ${p.files} files` : ''}`;
			this.item.tooltip = `amplidex: the daemon (pid ${s.pid}) is scanning${p ? `: ${p.phase}, ${p.collections} collections so far` : ''}`;
			return;
		}
		const n = (s.roots ?? []).reduce((sum, r) => sum + (r.collections ?? 0), 0);
		this.item.text = `$(database) amplidex: ${n} collection${n === 1 ? '' : 's'}`;
		this.item.tooltip = `amplidex: the daemon runs (pid ${s.pid}, up ${s.uptime})`;
	}
}
