// The amplidex extension: it runs `amplidex lsp` for the files of Amplifier
// collections, shows the effective (merged) profile of the profile being
// edited and what the runtime mounts for the bundle being edited (the
// composed bundle), runs `amplidex check` into the Problems panel, shows the
// daemon's state in the status bar (from the language server's
// amplidex/status notifications) and declares source.fixAll.amplidex for
// fix on save.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
	ClientCapabilities,
	FeatureState,
	LanguageClient,
	LanguageClientOptions,
	NotificationType,
	RequestType,
	ServerOptions,
	State,
	StaticFeature,
	TextDocumentIdentifier,
} from 'vscode-languageclient/node';

// Where the releases are: the .vsix of each platform, with the binary
// inside, and the archives and packages of the binary alone.
const releasesURL = 'https://github.com/amplidex/amplidex/releases';

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

// amplidex/composedBundle: what the runtime mounts for the bundle a
// document is, or for the bundle of its repository that includes it,
// composed by the language server over the unsaved buffers, as Markdown.
interface ComposedBundle {
	uri: string;
	bundle: string;
	text: string;
	links: { line: number; start: number; end: number; target: string; targetLine?: number }[];
	refused?: string;
	incomplete?: boolean;
}
const composedBundleRequest = new RequestType<MergedProfileParams, ComposedBundle, void>('amplidex/composedBundle');

const composedScheme = 'amplidex-composed';

// amplidex/status: what answers the editor, sent by the language server
// once initialized and whenever it changes, to a client whose
// capabilities hold experimental.amplidexStatus.
interface ServerStatus {
	state: 'scanning' | 'ready' | 'in-process';
	pid?: number;
	collections: number;
	files: number;
	warnings?: number;
	message?: string;
}
const statusNotification = new NotificationType<ServerStatus>('amplidex/status');

// StatusCapability asks the language server for amplidex/status.
class StatusCapability implements StaticFeature {
	fillClientCapabilities(capabilities: ClientCapabilities): void {
		capabilities.experimental = { ...(capabilities.experimental as object | undefined), amplidexStatus: true };
	}
	initialize(): void {}
	getState(): FeatureState {
		return { kind: 'static' };
	}
	clear(): void {}
}

let client: LanguageClient | undefined;

// bundledDir is the directory of the binary a platform's .vsix holds
// (bin/ in the extension); set by activate.
let bundledDir = '';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
	bundledDir = path.join(context.extensionPath, 'bin');
	const output = vscode.window.createOutputChannel('amplidex', { log: true });
	const statusOutput = vscode.window.createOutputChannel('amplidex status');
	const checks = vscode.languages.createDiagnosticCollection('amplidex check');
	const merged = new MergedProfiles(() => client);
	const composed = new ComposedBundles(() => client);
	const status = new StatusItem();
	context.subscriptions.push(output, statusOutput, checks, merged, composed, status);
	const restart = async () => {
		await stopClient();
		status.starting();
		await startClient(output, status);
	};

	context.subscriptions.push(
		vscode.workspace.registerTextDocumentContentProvider(mergedScheme, merged),
		vscode.languages.registerDocumentLinkProvider({ scheme: mergedScheme }, merged),
		vscode.workspace.onDidChangeTextDocument((e) => merged.sourceChanged(e.document)),
		vscode.workspace.registerTextDocumentContentProvider(composedScheme, composed),
		vscode.languages.registerDocumentLinkProvider({ scheme: composedScheme }, composed),
		vscode.workspace.onDidChangeTextDocument((e) => composed.sourceChanged(e.document)),
		vscode.workspace.onDidSaveTextDocument((d) => composed.sourceChanged(d)),
		composed.watchDisk(),
		vscode.commands.registerCommand('amplidex.restartServer', restart),
		vscode.commands.registerCommand('amplidex.showStatus', () => showStatus(statusOutput)),
		vscode.commands.registerCommand('amplidex.showLogs', () => output.show(true)),
		vscode.commands.registerCommand('amplidex.check', () => checkWorkspace(checks)),
		vscode.commands.registerCommand('amplidex.showMergedProfile', (uri?: vscode.Uri) => merged.show(uri)),
		vscode.commands.registerCommand('amplidex.showComposedBundle', (uri?: vscode.Uri) => composed.show(uri)),
		// Trusted, the workspace's own amplidex.path and amplidex.env
		// apply (they are restricted settings until then).
		vscode.workspace.onDidGrantWorkspaceTrust(restart),
		vscode.workspace.onDidChangeConfiguration(async (e) => {
			if (e.affectsConfiguration('amplidex.path') || e.affectsConfiguration('amplidex.env')) {
				await restart();
			}
		}),
	);
	await startClient(output, status);
}

export function deactivate(): Thenable<void> | undefined {
	return stopClient();
}

// settings reads the extension's configuration.
function settings() {
	const c = vscode.workspace.getConfiguration('amplidex');
	return {
		path: (c.get<string>('path') ?? '').trim(),
		env: c.get<Record<string, string>>('env') ?? {},
	};
}

// environment is the extension host's environment with amplidex.env on top.
function environment(): NodeJS.ProcessEnv {
	return { ...process.env, ...settings().env };
}

// Binary is the amplidex program the extension runs, and where it was
// found: the amplidex.path setting, PATH (or where `go install` puts
// programs), or the one a platform's .vsix bundles.
interface Binary {
	path: string;
	from: 'setting' | 'PATH' | 'bundled';
}

// BinaryNotFound says why there is no Binary.
class BinaryNotFound extends Error {}

// findBinary looks for amplidex in this order: the amplidex.path setting,
// then `amplidex` on PATH (then in $GOBIN, $GOPATH/bin and ~/go/bin, where
// `go install` puts it), then the binary bundled in the extension. A
// setting that names no executable file is an error, not a reason to look
// further: the user asked for that program.
//
// A path in the setting is taken as it is (relative to the first
// workspace folder once the workspace is trusted, else to the home
// directory, so that an untrusted repository cannot hold the program a
// relative path names); a bare name is looked up on PATH and in the `go
// install` directories. In an untrusted workspace VS Code gives
// amplidex.path and amplidex.env the user's values, never the
// workspace's: package.json lists them in
// capabilities.untrustedWorkspaces.restrictedConfigurations.
function findBinary(): Binary {
	const configured = settings().path;
	const ext = process.platform === 'win32' ? ['.exe', ''] : [''];
	if (configured !== '') {
		let found: string | undefined;
		if (configured.includes('/') || configured.includes('\\')) {
			const folder = vscode.workspace.isTrusted ? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath : undefined;
			const base = folder ?? os.homedir();
			const p = path.resolve(base, configured.replace(/^~(?=[/\\])/, os.homedir()));
			found = ext.map((e) => p + e).find(executable);
		} else {
			found = onPath(configured, ext);
		}
		if (!found) {
			throw new BinaryNotFound(`"amplidex.path" is "${configured}", which is no executable file`);
		}
		return { path: found, from: 'setting' };
	}
	const found = onPath('amplidex', ext);
	if (found) {
		return { path: found, from: 'PATH' };
	}
	const bundled = path.join(bundledDir, process.platform === 'win32' ? 'amplidex.exe' : 'amplidex');
	if (fs.existsSync(bundled)) {
		// A .vsix is a zip: should its file have lost the executable bit
		// on the way, give it back.
		if (process.platform !== 'win32' && !executable(bundled)) {
			try {
				fs.chmodSync(bundled, 0o755);
			} catch {
				// said below, as not found
			}
		}
		if (executable(bundled)) {
			return { path: bundled, from: 'bundled' };
		}
	}
	throw new BinaryNotFound('amplidex is not on PATH, and this installation of the extension bundles no binary for this platform');
}

// executable reports whether p is an executable file.
function executable(p: string): boolean {
	try {
		fs.accessSync(p, fs.constants.X_OK);
		return fs.statSync(p).isFile();
	} catch {
		return false;
	}
}

// onPath looks name up on PATH (amplidex.env's, when it sets one), then
// in $GOBIN, $GOPATH/bin and ~/go/bin.
function onPath(name: string, ext: string[]): string | undefined {
	const env = environment();
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
			const p = path.join(d, name + e);
			if (executable(p)) {
				return p;
			}
		}
	}
	return undefined;
}

// describe says where a Binary was found, for the output channel.
function describe(b: Binary): string {
	switch (b.from) {
		case 'setting':
			return 'the "amplidex.path" setting';
		case 'PATH':
			return 'found on PATH';
		default:
			return 'bundled with the extension';
	}
}

// missingBinary says that amplidex cannot be found, why, and where to get
// it.
async function missingBinary(why: string): Promise<void> {
	const choice = await vscode.window.showErrorMessage(
		`amplidex: cannot run the amplidex binary: ${why}. Install the extension's .vsix for your platform (it bundles the binary), ` +
			'put amplidex on PATH (a release archive or package), or set "amplidex.path".',
		'Open Releases',
		'Open Settings',
		'Show Logs',
	);
	if (choice === 'Open Releases') {
		await vscode.env.openExternal(vscode.Uri.parse(releasesURL));
	} else if (choice === 'Open Settings') {
		await vscode.commands.executeCommand('workbench.action.openSettings', 'amplidex.path');
	} else if (choice === 'Show Logs') {
		await vscode.commands.executeCommand('amplidex.showLogs');
	}
}

async function startClient(output: vscode.LogOutputChannel, status: StatusItem): Promise<void> {
	let bin: Binary;
	try {
		bin = findBinary();
	} catch (err) {
		const why = err instanceof Error ? err.message : String(err);
		output.error(`cannot run the amplidex binary: ${why}`);
		status.failed(why);
		void missingBinary(why);
		return;
	}
	output.info(`using ${bin.path} (${describe(bin)})`);
	const run = { command: bin.path, args: ['lsp'], options: { env: environment() } };
	const serverOptions: ServerOptions = { run, debug: run };
	const clientOptions: LanguageClientOptions = {
		// Broad: the server decides what it serves and ignores the rest.
		documentSelector: [
			{ scheme: 'file', language: 'markdown' },
			{ scheme: 'file', language: 'yaml' },
			{ scheme: 'file', pattern: '**/pyproject.toml' },
			{ scheme: 'file', pattern: '**/collections.lock' },
		],
		outputChannel: output,
	};
	const c = new LanguageClient('amplidex', 'amplidex', serverOptions, clientOptions);
	c.registerFeature(new StatusCapability());
	c.onNotification(statusNotification, (s) => {
		if (client === c) {
			status.show(s);
		}
	});
	c.onDidChangeState((e) => {
		if (client === c && e.newState === State.Stopped) {
			status.failed('the language server stopped (Restart Language Server starts it again)');
		}
	});
	client = c;
	try {
		await c.start();
		const info = c.initializeResult?.serverInfo;
		output.info(`amplidex lsp ${info?.version || '(development build)'} started`);
	} catch (err) {
		output.error(`amplidex lsp did not start: ${err}`);
		status.failed(`the language server did not start: ${err}`);
		void vscode.window.showErrorMessage(`amplidex: the language server did not start: ${err}`, 'Show Logs').then((choice) => {
			if (choice) {
				void vscode.commands.executeCommand('amplidex.showLogs');
			}
		});
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

// runAmplidex runs the binary with args in cwd (else the first workspace
// folder) and returns what it printed and its exit code.
function runAmplidex(args: string[], cwd?: string): Promise<{ stdout: string; stderr: string; code: number }> {
	let bin: string;
	try {
		bin = findBinary().path;
	} catch (err) {
		return Promise.reject(err);
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
	if (err instanceof BinaryNotFound) {
		void missingBinary(err.message);
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

// ComposedBundles serves the read-only documents of the
// amplidex-composed scheme: amplidex-composed:<source path>.composed.md?<source URI>.
// Each shows what the language server composes for the source (a
// bundle.md, a behavior, an agent or a context file of a bundle
// repository), and is asked again, debounced, when a Markdown or YAML
// file changes (an edit of an included behavior changes its includer's
// view) or files are created, deleted or renamed.
class ComposedBundles implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider, vscode.Disposable {
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;
	private readonly last = new Map<string, ComposedBundle>();
	private timer: NodeJS.Timeout | undefined;

	constructor(private readonly getClient: () => LanguageClient | undefined) {}

	dispose(): void {
		clearTimeout(this.timer);
		this.changed.dispose();
	}

	static uriFor(source: vscode.Uri): vscode.Uri {
		return vscode.Uri.from({ scheme: composedScheme, path: source.path + '.composed.md', query: source.toString() });
	}

	async show(uri?: vscode.Uri): Promise<void> {
		let source = uri ?? vscode.window.activeTextEditor?.document.uri;
		if (source?.scheme === composedScheme) {
			source = vscode.Uri.parse(source.query);
		}
		if (!source || source.scheme !== 'file' || !/\.(md|ya?ml)$/i.test(source.fsPath)) {
			void vscode.window.showWarningMessage('amplidex: open a bundle.md, a behavior or another file of a bundle repository to see its composed bundle.');
			return;
		}
		const target = ComposedBundles.uriFor(source);
		const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
		if (open) {
			this.changed.fire(target);
		}
		const doc = open ?? (await vscode.workspace.openTextDocument(target));
		await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false, preserveFocus: true });
	}

	async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
		const c = this.getClient();
		if (!c || !c.isRunning()) {
			return '# amplidex: the language server is not running.\n';
		}
		try {
			const res = await c.sendRequest(composedBundleRequest, { textDocument: { uri: uri.query } }, token);
			this.last.set(uri.toString(), res);
			return res.text;
		} catch (err) {
			this.last.delete(uri.toString());
			return `# amplidex: ${err instanceof Error ? err.message : String(err)}\n`;
		}
	}

	// sourceChanged refreshes the open composed bundles, 300 ms after the
	// last edit of a Markdown or YAML file.
	sourceChanged(doc: vscode.TextDocument): void {
		if (doc.uri.scheme !== 'file' || !/\.(md|ya?ml)$/i.test(doc.uri.fsPath)) {
			return;
		}
		this.refreshAll();
	}

	// watchDisk refreshes the open composed bundles when a Markdown or
	// YAML file is created, changed or deleted on disk, by VS Code or
	// anything else (a checkout, a terminal).
	watchDisk(): vscode.Disposable {
		const w = vscode.workspace.createFileSystemWatcher('**/*.{md,yaml,yml}');
		w.onDidCreate(() => this.refreshAll());
		w.onDidChange(() => this.refreshAll());
		w.onDidDelete(() => this.refreshAll());
		return w;
	}

	// refreshAll asks again for every open composed bundle, 300 ms from
	// now.
	refreshAll(): void {
		clearTimeout(this.timer);
		this.timer = setTimeout(() => {
			for (const d of vscode.workspace.textDocuments) {
				if (d.uri.scheme === composedScheme) {
					this.changed.fire(d.uri);
				}
			}
		}, 300);
	}

	// provideDocumentLinks makes each origin and file of the view a link
	// to its file, at its line.
	provideDocumentLinks(doc: vscode.TextDocument): vscode.DocumentLink[] {
		const res = this.last.get(doc.uri.toString());
		if (!res) {
			return [];
		}
		const links: vscode.DocumentLink[] = [];
		for (const l of res.links) {
			if (l.line >= doc.lineCount) {
				continue;
			}
			let target = vscode.Uri.parse(l.target);
			if (l.targetLine) {
				target = target.with({ fragment: `L${l.targetLine}` });
			}
			const link = new vscode.DocumentLink(new vscode.Range(l.line, l.start, l.line, l.end), target);
			link.tooltip = `Open ${path.basename(target.fsPath)}${l.targetLine ? ` at line ${l.targetLine}` : ''}`;
			links.push(link);
		}
		return links;
	}
}

// StatusItem shows what answers the editor in the status bar: the
// daemon (scanning, or how many collections its roots hold) or the
// language server in process, from the server's amplidex/status
// notifications; nothing is polled.
class StatusItem implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('amplidex.status', vscode.StatusBarAlignment.Left, 0);

	constructor() {
		this.item.name = 'amplidex';
		this.item.command = 'amplidex.showStatus';
		this.starting();
		this.item.show();
	}

	dispose(): void {
		this.item.dispose();
	}

	starting(): void {
		this.item.command = 'amplidex.showStatus';
		this.item.text = '$(database) amplidex';
		this.item.tooltip = 'amplidex: the language server is starting';
	}

	failed(why: string): void {
		this.item.text = '$(warning) amplidex';
		this.item.tooltip = `amplidex: ${why}`;
		this.item.command = 'amplidex.showLogs';
	}

	show(s: ServerStatus): void {
		this.item.command = 'amplidex.showStatus';
		const warnings = s.warnings ? `; ${s.warnings} warning${s.warnings === 1 ? '' : 's'} (Show Daemon Status)` : '';
		switch (s.state) {
			case 'scanning':
				this.item.text = `$(sync~spin) amplidex: scanning ${s.files} files`;
				this.item.tooltip = `amplidex: the daemon (pid ${s.pid}) is scanning${s.message ? `: ${s.message}` : ''}, ${s.collections} collection${s.collections === 1 ? '' : 's'} so far${warnings}`;
				return;
			case 'ready':
				this.item.text = `$(database) amplidex: ${s.collections} collection${s.collections === 1 ? '' : 's'}`;
				this.item.tooltip = `amplidex: the daemon (pid ${s.pid}) answers: ${s.collections} collection${s.collections === 1 ? '' : 's'}, ${s.files} file${s.files === 1 ? '' : 's'}${warnings}`;
				return;
			default:
				this.item.text = '$(circle-slash) amplidex: in process';
				this.item.tooltip = `amplidex: ${s.message ?? 'no daemon answers: the language server reads the collections itself'}`;
		}
	}
}
