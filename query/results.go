package query

import (
	"iter"
	"time"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// The result types below are the JSON that `amplidex query … --json` prints
// and that the daemon returns. Their field names are stable; the README
// documents them.

// Counts is how many resources of each kind a collection has.
type Counts struct {
	Profiles      int `json:"profiles"`
	Agents        int `json:"agents"`
	Context       int `json:"context"`
	ScenarioTools int `json:"scenario_tools"`
	Modules       int `json:"modules"`
}

// CollectionInfo describes one collection directory.
type CollectionInfo struct {
	Name        string             `json:"name"`
	Version     string             `json:"version"`
	Description string             `json:"description"`
	Root        discovery.RootKind `json:"root"`
	RootPath    string             `json:"root_path"`
	Dir         string             `json:"dir"`
	RealDir     string             `json:"real_dir"`
	Base        string             `json:"base"`
	Layout      discovery.Layout   `json:"layout"`
	Valid       bool               `json:"valid"`
	Problem     string             `json:"problem,omitempty"`
	// Status is "active" (it wins its name), "shadowed" or "skipped".
	Status   string                  `json:"status"`
	Counts   Counts                  `json:"counts"`
	Requires []discovery.Requirement `json:"requires,omitempty"`
}

// CollectionDetail is a collection with its resources, as `query
// collection NAME` prints it.
type CollectionDetail struct {
	CollectionInfo
	Author       string            `json:"author,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	URLs         map[string]string `json:"urls,omitempty"`
	Resources    []ResourceInfo    `json:"resources"`
	Shadowed     []CollectionInfo  `json:"shadowed"`
	Skipped      []CollectionInfo  `json:"skipped"`
}

// ResolveResult is what `query resolve NAME` prints.
type ResolveResult struct {
	Name     string           `json:"name"`
	Found    bool             `json:"found"`
	Winner   *CollectionInfo  `json:"winner"`
	Shadowed []CollectionInfo `json:"shadowed"`
	Skipped  []CollectionInfo `json:"skipped"`
	// Unverified is set on a no_sync answer given while the daemon's first
	// scan runs: it comes from the summary the last run left in the index
	// when it stopped, not yet checked against the disk (see ResolveDescribed).
	Unverified bool `json:"unverified,omitempty"`
	// DidYouMean is, when the name resolves nowhere, the winning name it
	// most likely misspells.
	DidYouMean string `json:"did_you_mean,omitempty"`
}

// ResourceInfo describes one resource.
type ResourceInfo struct {
	Collection  string             `json:"collection"`
	Kind        discovery.Kind     `json:"kind"`
	Name        string             `json:"name"`
	Ref         string             `json:"ref"`
	Path        string             `json:"path"`
	Rel         string             `json:"rel"`
	Description string             `json:"description,omitempty"`
	Root        discovery.RootKind `json:"root"`
}

// ProfileResult is what `query profile REF` prints.
type ProfileResult struct {
	ResourceInfo
	Version string   `json:"version,omitempty"`
	Extends string   `json:"extends,omitempty"`
	Chain   []string `json:"chain"`
	// Front is the profile's own front matter; Merged the effective
	// profile. Both keep the authors' key order (see
	// resolve.Set.Effective) and a float stays a float (10.0).
	Front *syntax.Map `json:"front,omitzero"`
	// Complete is false when the extends chain does not reach a profile
	// that extends none (a reference that does not resolve, a cycle, a
	// chain too deep, a profile without usable front matter): Merged,
	// if any, is then only what resolved, not the effective profile.
	Complete bool `json:"complete"`
	// Problems say why the chain is incomplete.
	Problems []diag.Diagnostic `json:"problems,omitempty"`
	Merged   *syntax.Map       `json:"merged,omitzero"`
}

// AgentResult is what `query agent REF` prints.
type AgentResult struct {
	ResourceInfo
	Front *syntax.Map `json:"front,omitzero"`
}

// DepStatus is one requires entry and how it is met.
type DepStatus struct {
	Name       string `json:"name"`
	Constraint string `json:"constraint"`
	// Status is "ok", "missing", "unsatisfied" or "invalid".
	Status       string `json:"status"`
	FoundVersion string `json:"found_version,omitempty"`
	FoundDir     string `json:"found_dir,omitempty"`
}

// DepsResult is what `query deps NAME` prints: what the collection requires
// and who requires it.
type DepsResult struct {
	Name       string      `json:"name"`
	Version    string      `json:"version"`
	Requires   []DepStatus `json:"requires"`
	RequiredBy []DepUser   `json:"required_by"`
}

// DepUser is a collection that requires another.
type DepUser struct {
	Name       string `json:"name"`
	Constraint string `json:"constraint"`
	Satisfied  bool   `json:"satisfied"`
}

// DiagnosticsResult is what `query diagnostics [PATH]` prints.
type DiagnosticsResult struct {
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
	Summary     Summary           `json:"summary"`
}

// JSONFields streams the diagnostics to a client (see Object).
func (d *DiagnosticsResult) JSONFields() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		_ = yield("diagnostics", d.Diagnostics) && yield("summary", d.Summary)
	}
}

// Summary counts diagnostics by severity.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	Files    int `json:"files"`
}

// ChangesResult is the answer to "changes": what changed after a clock.
type ChangesResult struct {
	Clock           Clock `json:"clock"`
	IsFreshInstance bool  `json:"is_fresh_instance"`
	// Files are the changed paths, or with IsFreshInstance every indexed
	// path.
	Files []Change `json:"files"`
}

// JSONFields streams the changed files to a client (see Object).
func (r *ChangesResult) JSONFields() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		_ = yield("clock", r.Clock) && yield("is_fresh_instance", r.IsFreshInstance) && yield("files", r.Files)
	}
}

// Change is one entry of a "changes" answer.
type Change struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

// SubscribeResult is the answer to "subscribe"; the notifications that
// follow carry an Update each.
type SubscribeResult struct {
	Clock Clock `json:"clock"`
}

// Update is one notification of a subscription: the files whose
// diagnostics changed.
type Update struct {
	Clock Clock             `json:"clock"`
	Files []FileDiagnostics `json:"files"`
	// Initial marks the first update of a subscription, sent even when
	// empty: it holds every followed file that has diagnostics, so a
	// file it leaves out has none. A client that subscribes again (the
	// daemon restarted) clears with it what cleared meanwhile.
	Initial bool `json:"initial,omitempty"`
}

// FileDiagnostics is the diagnostics of one file, as a subscription sends
// them whenever they change; an empty list means they cleared.
type FileDiagnostics struct {
	Path        string            `json:"path"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
}

// Status is the answer to "status".
type Status struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Uptime  string    `json:"uptime"`
	// Build is the daemon's build.
	Build Build `json:"build"`
	// Mode is how the daemon was started (see DaemonInfo).
	Mode Mode `json:"mode"`
	// SocketActivated is set when the service manager made the socket and
	// handed it to the daemon.
	SocketActivated bool   `json:"socket_activated,omitempty"`
	Socket          string `json:"socket"`
	Index           string `json:"index"`
	Clock           Clock  `json:"clock"`
	// IdleExit is how long the daemon stays without a client before it
	// exits, as a Go duration; "" when it never does (see ModeAutostart).
	// Connections counts the connections open, the asker's included.
	// IdleDeadline is when it exits should no client connect after this
	// answer; it is set only when the asker's is the one connection open.
	IdleExit     string    `json:"idle_exit,omitempty"`
	IdleDeadline time.Time `json:"idle_deadline,omitzero"`
	Connections  int       `json:"connections"`
	// Scanning is set while the first scan runs: roots, projects and
	// counts are empty until it ends, and Progress says how far it got.
	Scanning bool          `json:"scanning"`
	Progress *ScanProgress `json:"progress,omitempty"`
	Roots    []RootStatus  `json:"roots"`
	// Projects are the registered projects, by directory.
	Projects []ProjectStatus `json:"projects"`
	// Registering are the projects being registered now (read for the
	// first time), and how far each got; their questions wait for them.
	Registering []RegistrationProgress `json:"registering"`
	Files       int                    `json:"files"`
	Analyzed    int                    `json:"analyzed"`
	Warnings    []string               `json:"warnings"`
	// Bundles are the prepared bundles the daemon keeps warm.
	Bundles []BundleStatus `json:"bundles"`
	// BundleRoots are the roots watched for the bundles of the places
	// clients stand in (query bundles, query bundle); Collections is 0.
	BundleRoots []RootStatus `json:"bundle_roots,omitempty"`
}

// ScanProgress is how far the daemon's first scan got.
type ScanProgress struct {
	// Phase is "starting", "loading index, adding watches" (decoding what
	// the last run stored while the roots' watches are added) or "reading
	// roots".
	Phase string `json:"phase"`
	// Files counts the files seen so far, read or taken from the index.
	Files int `json:"files"`
	// Collections counts the collections (pyproject.toml files) seen so far.
	Collections int `json:"collections"`
	// Elapsed is the time since the scan began, as a Go duration.
	Elapsed string `json:"elapsed"`
}

// RegistrationProgress is how far the registration of a project got: the
// first read of its roots, which its first question waits for.
type RegistrationProgress struct {
	Dir string `json:"dir"`
	// Roots are set for a View of a client's own roots (see
	// ProjectStatus).
	Roots *Roots `json:"roots,omitempty"`
	// Phase is "adding watches" or "reading collections".
	Phase string `json:"phase"`
	// Files counts the files of the project's roots seen so far, read or
	// taken from the index; Collections the collections
	// (pyproject.toml files) among them.
	Files       int `json:"files"`
	Collections int `json:"collections"`
	// Elapsed is the time since the registration began, as a Go duration.
	Elapsed string `json:"elapsed"`
}

// ProjectStatus is one registered project in a "status" answer.
type ProjectStatus struct {
	Dir string `json:"dir"`
	// LastUsed is when a question last named it (its registration, for a
	// project remembered from an earlier run that nobody asked about since).
	LastUsed time.Time `json:"last_used"`
	// Roots are set for a View of a client's own roots, which differ from
	// the daemon's configuration (see Common.Roots).
	Roots *Roots `json:"roots,omitempty"`
}

// Mode is how a daemon was started.
type Mode string

// The modes of a daemon.
const (
	// ModeForeground: `amplidex daemon` in a terminal or under a
	// supervisor of the user's. Clients leave it alone.
	ModeForeground Mode = "foreground"
	// ModeDetached: started by `amplidex daemon --detach` (or `amplidex
	// daemon restart` of one). A client of another build replaces it.
	ModeDetached Mode = "detached"
	// ModeAutostart: started by a client that found none running (query,
	// watch, lsp). A client of another build replaces it, and it exits
	// once it has had no client for a while ([daemon] idle_exit).
	ModeAutostart Mode = "autostart"
	// ModeService: started by systemd or launchd (`amplidex service
	// install`). Clients leave it alone and say how to restart it.
	ModeService Mode = "service"
)

// DaemonInfo is the answer to "version": who answers on the socket.
type DaemonInfo struct {
	PID             int   `json:"pid"`
	Build           Build `json:"build"`
	Mode            Mode  `json:"mode"`
	SocketActivated bool  `json:"socket_activated,omitempty"`
	Scanning        bool  `json:"scanning"`
}

// ShutdownResult is the answer to "shutdown": the pid of the daemon that
// is stopping. It has finished the requests in flight once its socket is
// gone, and stopped once the process is.
type ShutdownResult struct {
	PID int `json:"pid"`
}

// ForgetResult is the answer to "forget".
type ForgetResult struct {
	Dir string `json:"dir"`
	// Forgotten is false when no project of that directory was registered.
	Forgotten bool `json:"forgotten"`
}

// RootStatus is one root in a "status" answer. State is how it is
// watched: "watching", "polling", "missing", or "too large" (neither
// watched nor polled: it holds more directories than a root may), or
// RootDegraded.
type RootStatus struct {
	Path        string             `json:"path"`
	Kind        discovery.RootKind `json:"kind"`
	State       string             `json:"state"`
	Watches     int                `json:"watches"`
	Collections int                `json:"collections"`
	Warnings    []string           `json:"warnings,omitempty"`
}

// RootDegraded is the State of a root in a "status" answer when it, or
// some collection of it, could not be read completely the last time: its
// last good reads stand, and it is read again, backing off.
const RootDegraded = "degraded"

// BundleState is how a watched manifest's prepared bundle stands.
type BundleState string

// The states of a watched manifest.
const (
	BundleWarm     BundleState = "warm"     // the entry of the current bytes exists
	BundleBuilding BundleState = "building" // a cold build runs in the background
	BundleFailed   BundleState = "failed"   // the last build failed; Error says why
	BundleMissing  BundleState = "missing"  // the manifest cannot be read
)

// BundleStatus is one watched manifest in a "status" answer.
type BundleStatus struct {
	Manifest string      `json:"manifest"`
	Key      string      `json:"key,omitempty"`
	Dir      string      `json:"dir,omitempty"`
	State    BundleState `json:"state"`
	Error    string      `json:"error,omitempty"`
	// LastBuild is when the last cold build finished, and Took how long
	// it ran; zero when the entry was found warm.
	LastBuild time.Time `json:"last_build,omitzero"`
	Took      string    `json:"took,omitempty"`
}
