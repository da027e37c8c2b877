package service

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/lint"
)

// The names of the service files.
const (
	SocketUnit    = "amplidex.socket"
	ServiceUnit   = "amplidex.service"
	LaunchdLabel  = "com.github.amplidex"
	serviceHeader = "Written by `amplidex service install`; `amplidex service uninstall` removes it."
)

// Spec is what the service files say: the program, the socket
// clients dial, the state directory and the environment the daemon needs
// to find the same files as the user's shell.
type Spec struct {
	exe    string
	config string // --config, when one was given
	socket string
	// runtimeSocket is the socket's path inside the runtime directory of
	// the user's service manager (systemd's %t), when the socket lies
	// there: the socket unit then names it through the specifier, not
	// through this machine's path.
	runtimeSocket string
	stateDir      string
	env           map[string]string
	// header is the comment atop each file; serviceHeader when empty.
	header string
}

// File is one file a service install writes.
type File struct {
	Path    string
	Content string
}

// envKeys are the variables a service carries over from the shell
// that installed it, when set there: they decide where amplidex's files
// and the roots are.
var envKeys = []string{"AMPLIDEX_HOME", "AMPLIDEX_BUNDLED", "AMPLIFIER_AGENT_HOME",
	"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}

// Spec builds the spec from the workspace and the environment.
func (l *Launcher) Spec(ws *lint.Workspace) (Spec, error) {
	exe, err := os.Executable()
	if err != nil {
		return Spec{}, err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	spec := Spec{exe: exe, socket: ws.Paths.Socket, stateDir: ws.Paths.StateDir, env: map[string]string{},
		runtimeSocket: runtimeSocket(ws.Paths.Socket, l.Getenv, os.Getuid())}
	if l.ConfigPath != "" {
		if spec.config, err = filepath.Abs(l.ConfigPath); err != nil {
			return Spec{}, err
		}
	}
	for _, k := range envKeys {
		if v := l.Getenv(k); v != "" {
			spec.env[k] = v
		}
	}
	if _, ok := spec.env["AMPLIDEX_BUNDLED"]; ok {
		spec.env["AMPLIDEX_BUNDLED"] = strings.Join(ws.Bundled, string(filepath.ListSeparator))
	}
	if spec.runtimeSocket != "" {
		// The user manager's runtime directory: systemd sets it for its
		// services itself, and the unit names no machine's path.
		delete(spec.env, "XDG_RUNTIME_DIR")
	}
	return spec, nil
}

// runtimeSocket returns socket's path relative to the runtime directory
// of the user's systemd manager (%t in a user unit), or "" when it does
// not lie there. That directory is /run/user/<uid>, which pam_systemd
// also gives the login session as $XDG_RUNTIME_DIR; only when the shell's
// $XDG_RUNTIME_DIR is that directory is the socket there what clients
// dial. The default socket, $XDG_RUNTIME_DIR/amplidex/amplidex.sock, is.
func runtimeSocket(socket string, getenv func(string) string, uid int) string {
	dir := "/run/user/" + strconv.Itoa(uid)
	if filepath.Clean(getenv("XDG_RUNTIME_DIR")) != dir {
		return ""
	}
	rel, ok := strings.CutPrefix(filepath.Clean(socket), dir+"/")
	if !ok {
		return ""
	}
	return filepath.ToSlash(rel)
}

// PackagedExe is where the .deb and .rpm packages put the program.
const PackagedExe = "/usr/bin/amplidex"

// packagedHeader is the comment atop the packaged units.
const packagedHeader = "Installed by the amplidex package: `systemctl --user enable --now amplidex.socket` starts it for the user."

// PackagedUnits returns the systemd user units the .deb and .rpm packages
// install in /usr/lib/systemd/user, by name: what `service install` writes
// for a user with the default socket and no other setting, running
// PackagedExe. They name no one's paths: systemd puts the socket in each
// user's runtime directory (%t), where clients find it.
func PackagedUnits() ([]File, error) {
	const uid = 1000 // any: the units name the runtime directory by %t
	getenv := func(k string) string {
		return map[string]string{"HOME": "/home/user", "XDG_RUNTIME_DIR": "/run/user/" + strconv.Itoa(uid)}[k]
	}
	paths, err := query.DefaultPaths(getenv)
	if err != nil {
		return nil, err
	}
	spec := Spec{exe: PackagedExe, socket: paths.Socket, stateDir: paths.StateDir,
		runtimeSocket: runtimeSocket(paths.Socket, getenv, uid), header: packagedHeader}
	if spec.runtimeSocket == "" {
		return nil, fmt.Errorf("the default socket %s is not in the runtime directory", paths.Socket)
	}
	return []File{{SocketUnit, systemdSocket(spec)}, {ServiceUnit, systemdService(spec)}}, nil
}

// headerOf returns the comment atop s's files.
func (s Spec) headerOf() string {
	if s.header != "" {
		return s.header
	}
	return serviceHeader
}

// args are the daemon's arguments after the program.
func (s Spec) args(extra ...string) []string {
	args := []string{"daemon", "--service"}
	if s.config != "" {
		args = append(args, "--config", s.config)
	}
	return append(args, extra...)
}

// envKeys returns the keys of s.env, sorted.
func (s Spec) envKeys() []string {
	keys := make([]string, 0, len(s.env))
	for k := range s.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// systemdDir is where user units live: $XDG_CONFIG_HOME/systemd/user.
func systemdDir(getenv func(string) string) (string, error) {
	base := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", fmt.Errorf("$XDG_CONFIG_HOME is unset and $HOME %q is not an absolute path", home)
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "systemd", "user"), nil
}

// launchdPath is the launchd agent's plist: ~/Library/LaunchAgents.
func launchdPath(getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", fmt.Errorf("$HOME %q is not an absolute path", home)
	}
	return filepath.Join(home, "Library", "LaunchAgents", LaunchdLabel+".plist"), nil
}

// Files returns the files of the service manager of goos.
func Files(goos string, s Spec, getenv func(string) string) ([]File, error) {
	switch goos {
	case "linux":
		dir, err := systemdDir(getenv)
		if err != nil {
			return nil, err
		}
		return []File{
			{filepath.Join(dir, SocketUnit), systemdSocket(s)},
			{filepath.Join(dir, ServiceUnit), systemdService(s)},
		}, nil
	case "darwin":
		p, err := launchdPath(getenv)
		if err != nil {
			return nil, err
		}
		return []File{{p, launchdPlist(s)}}, nil
	}
	return nil, fmt.Errorf("no service manager amplidex knows on %s (systemd on Linux, launchd on macOS)", goos)
}

// systemdSocket is the socket unit: systemd makes the socket where clients
// look for it and starts the service on the first connection.
func systemdSocket(s Spec) string {
	listen := systemdEscape(s.socket)
	if s.runtimeSocket != "" {
		listen = "%t/" + systemdEscape(s.runtimeSocket)
	}
	return "# " + s.headerOf() + `
[Unit]
Description=amplidex socket: questions about Amplifier collections

[Socket]
ListenStream=` + listen + `
SocketMode=0600
DirectoryMode=0700
RemoveOnStop=true

[Install]
WantedBy=sockets.target
`
}

// systemdService is the service unit the socket starts. It logs to the
// journal; SIGHUP reloads the configuration.
func systemdService(s Spec) string {
	var b strings.Builder
	b.WriteString("# " + s.headerOf() + `
[Unit]
Description=amplidex: watches and indexes Amplifier collections, answers on its socket
Requires=` + SocketUnit + `
After=` + SocketUnit + `

[Service]
Type=simple
`)
	words := append([]string{s.exe}, s.args()...)
	for i, w := range words {
		words[i] = SystemdQuote(w)
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(words, " "))
	b.WriteString("ExecReload=/bin/kill -HUP $MAINPID\n")
	for _, k := range s.envKeys() {
		fmt.Fprintf(&b, "Environment=%s\n", SystemdQuote(k+"="+s.env[k]))
	}
	b.WriteString(`Restart=on-failure

[Install]
Also=` + SocketUnit + "\n")
	return b.String()
}

// systemdEscape escapes the specifier character of a unit file value.
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// SystemdQuote quotes one word of a command line or an assignment in a
// unit file: double quotes, with backslash, quote, dollar and percent
// escaped.
func SystemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", "$$", "%", "%%")
	return `"` + r.Replace(s) + `"`
}

// launchdPlist is the launchd agent: it runs the daemon at login and again
// when it fails, logging to daemon.log in the state directory. launchd
// hands over sockets only through a C API, so the daemon makes its own.
func launchdPlist(s Spec) string {
	log := filepath.Join(s.stateDir, LogName)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- ` + serviceHeader + ` -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + LaunchdLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, w := range append([]string{s.exe}, s.args("--log-file", log)...) {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", xmlEscape(w))
	}
	b.WriteString("\t</array>\n")
	if len(s.env) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
		for _, k := range s.envKeys() {
			fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", xmlEscape(k), xmlEscape(s.env[k]))
		}
		b.WriteString("\t</dict>\n")
	}
	b.WriteString(`	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardErrorPath</key>
	<string>` + xmlEscape(log) + `</string>
</dict>
</plist>
`)
	return b.String()
}

// xmlEscape escapes s as text of an XML element, as xml.EscapeText does:
// the five markup characters, tab, newline and carriage return as
// references, and what XML cannot hold (control characters, invalid
// UTF-8) as U+FFFD. encoding/xml is not linked for this: its tables are
// built by every process at start.
func xmlEscape(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, width := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if xmlChar(r) && (r != utf8.RuneError || width > 1) {
				i += width
				continue
			}
			esc = "\uFFFD" // not XML, or a byte of invalid UTF-8
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		i += width
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// xmlChar reports whether r is in XML 1.0's Char production.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// restartHint says how to restart the service on this system.
func restartHint() string {
	if runtime.GOOS == "darwin" {
		return fmt.Sprintf("launchctl kickstart -k gui/%d/%s", os.Getuid(), LaunchdLabel)
	}
	return "systemctl --user restart " + ServiceUnit
}
