package query

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/amplidex/amplidex/discovery"
	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/catalog"
)

// Common are the parameters of every method that answers about a
// project's collections or a client's bundles.
type Common struct {
	// Project is the project directory the question is about; "" for none
	// (the user and bundled roots only). The daemon registers a project on
	// its first question and watches it from then on.
	Project string `json:"project,omitempty"`
	// NoSync answers from what is indexed already, without waiting for
	// changes made before the question (read-your-writes).
	NoSync bool `json:"no_sync,omitempty"`
	// Roots, when set, are the client's own roots: the daemon answers
	// over them, not over its own configuration's, so that clients with
	// other roots (another AMPLIDEX_BUNDLED, another configuration) each
	// get their own answer from one daemon.
	Roots *Roots `json:"roots,omitempty"`
	// Bundles, when set, is where the client looks for bundles: the
	// bundle methods answer over it, and a subscription follows the
	// diagnostics of the bundle repository it stands in too.
	Bundles *BundleScope `json:"bundles,omitempty"`
}

// Roots are a client's user and bundled roots: its home directory, whose
// .amplifier/collections is the user root ("" for none), and its bundled
// roots, lowest precedence. Collection, when set, is the collection the
// client stands in: a collection directory in no root (a clone of a
// collection's repository), put ahead of every root, as `check` and the
// language server put it; the daemon watches it as a root of its own.
type Roots struct {
	Home       string   `json:"home,omitempty"`
	Bundled    []string `json:"bundled,omitempty"`
	Collection string   `json:"collection,omitempty"`
}

// MaxBundledRoots bounds the bundled roots a client may name.
const MaxBundledRoots = 32

// Scope returns the Common parameters of any params type that embeds
// Common.
func (c Common) Scope() Common { return c }

// Scoped is a params type that carries Common.
type Scoped interface{ Scope() Common }

// Params of the methods.
type (
	// ListParams ask for a list of a project's collections or resources.
	ListParams struct {
		Common
	}
	// NameParams name a collection.
	NameParams struct {
		Common
		Name string `json:"name"`
	}
	// RefParams name an agent: "collection:name", or a bare name that only
	// one collection has.
	RefParams struct {
		Common
		Ref string `json:"ref"`
	}
	// ProfileParams name a profile as RefParams name an agent; Merged asks
	// for the effective profile after its extends chain.
	ProfileParams struct {
		Common
		Ref    string `json:"ref"`
		Merged bool   `json:"merged,omitempty"`
	}
	// SearchParams carry search text.
	SearchParams struct {
		Common
		Text string `json:"text"`
	}
	// DiagnosticsParams narrow diagnostics to a file or directory.
	DiagnosticsParams struct {
		Common
		Path string `json:"path,omitempty"`
	}
	// ChangesParams ask what changed since a clock.
	ChangesParams struct {
		Common
		Since string `json:"since"`
	}
	// SubscribeParams follow the diagnostics of files below Paths (every
	// file when empty).
	SubscribeParams struct {
		Common
		Paths []string `json:"paths,omitempty"`
	}
	// StatusParams ask for the daemon's status; the Common parameters are
	// accepted, and a status never waits for pending changes.
	StatusParams struct {
		Common
	}
	// VersionParams ask who answers on the socket; they carry nothing.
	VersionParams struct{}
	// ShutdownParams ask the daemon to stop; they carry nothing.
	ShutdownParams struct{}
	// ForgetParams name a registered project to drop, by the directory
	// it was registered under (which may be gone).
	ForgetParams struct {
		Dir string `json:"dir"`
	}
	// BundleParams name a bundle: a name, ns:path, or a file (absolute,
	// or relative to Bundles.WorkDir). Composed asks for its composition
	// with its includes.
	BundleParams struct {
		Common
		Ref      string `json:"ref"`
		Composed bool   `json:"composed,omitempty"`
	}
)

// PrintOptions tune the text a method's result prints as.
type PrintOptions struct {
	// Header prints column headers (on a terminal).
	Header bool
	// Diagnostics prints the diagnostics of a result.
	Diagnostics DiagnosticPrinter
}

// MethodInfo is what every method of the table says of itself.
type MethodInfo interface {
	// Name is the method's name on the socket.
	Name() string
	// Summary is a one-line description, for help texts.
	Summary() string
	// FromView reports whether the method is answered from a project's
	// View alone, so that an in-process catalog answers it as the daemon
	// does; the others (status, changes, subscribe) need the daemon.
	FromView() bool
	// serveView registers the method on mux, answered from the View that
	// view returns for the params' scope (and, for a method that adds
	// what a bundle repository holds, the bundle View bundles returns
	// when the params say where the client looks for bundles).
	serveView(mux *Mux, view ViewFunc, bundles BundleViewFunc)
	// FromBundles reports whether the method is answered from a bundle
	// View (package discovery/bundle/catalog) alone, in process as
	// through the daemon.
	FromBundles() bool
	serveBundles(mux *Mux, view BundleViewFunc)
}

// ViewFunc returns the View a question of the given scope is answered
// from, once the changes it must see are indexed, and the clock of that
// View.
type ViewFunc func(ctx context.Context, scope Common) (*catalog.View, Clock, error)

// ServeViews registers on mux every method answered from a View; those
// that add what the bundle repository the client stands in holds (see
// Method.AnswerWithBundles) take its bundle View from bundles.
func ServeViews(mux *Mux, view ViewFunc, bundles BundleViewFunc) {
	for _, m := range Methods {
		if m.FromView() {
			m.serveView(mux, view, bundles)
		}
	}
}

// BundleViewFunc returns the bundle View a question of the given scope
// is answered from (scope.Bundles is set), once the changes it must see
// are taken in, and the clock of the answer.
type BundleViewFunc func(ctx context.Context, scope Common) (*bundlecat.View, Clock, error)

// ServeBundles registers on mux every method answered from a bundle View.
func ServeBundles(mux *Mux, view BundleViewFunc) {
	for _, m := range Methods {
		if m.FromBundles() {
			m.serveBundles(mux, view)
		}
	}
}

func (m *Method[P, R]) serveBundles(mux *Mux, view BundleViewFunc) {
	mux.Handle(m.name, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := m.Decode(raw)
		if err != nil {
			return nil, err
		}
		var scope Common
		if s, ok := any(p).(Scoped); ok {
			scope = s.Scope()
		}
		if scope.Bundles == nil {
			return nil, Errorf(CodeInvalidParams, "%s: bundles: where the client looks for bundles is missing", m.name)
		}
		v, clock, err := view(ctx, scope)
		if err != nil {
			return nil, err
		}
		r, err := m.AnswerBundles(v, p)
		if err != nil {
			return &Answer{Clock: clock}, err
		}
		return &Answer{Result: r, Clock: clock}, nil
	})
}

func (m *Method[P, R]) serveView(mux *Mux, view ViewFunc, bundles BundleViewFunc) {
	mux.Handle(m.name, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := m.Decode(raw)
		if err != nil {
			return nil, err
		}
		var scope Common
		if s, ok := any(p).(Scoped); ok {
			scope = s.Scope()
		}
		v, clock, err := view(ctx, scope)
		if err != nil {
			return nil, err
		}
		var b *bundlecat.View
		if m.addBundles != nil && scope.Bundles != nil && bundles != nil {
			var bclock Clock
			if b, bclock, err = bundles(ctx, scope); err != nil {
				return nil, err
			}
			if bclock.Tick > clock.Tick {
				clock = bclock
			}
		}
		r, err := m.AnswerWithBundles(v, b, p)
		if err != nil {
			return &Answer{Clock: clock}, err
		}
		return &Answer{Result: r, Clock: clock}, nil
	})
}

// Method is one socket method: its name, the type of its params P and of
// its result R, how a View answers it, and how its result prints as text.
// The table below declares every method once; the daemon, the command line
// and the editors use it rather than spell a method's name.
type Method[P, R any] struct {
	name    string
	summary string
	answer  func(v *catalog.View, p P) (R, error)
	bundles func(v *bundlecat.View, p P) (R, error)
	// addBundles, when set, adds to a View's answer what the bundle
	// repository a bundle View stands in holds.
	addBundles func(r R, b *bundlecat.View, p P) R
	print      func(w io.Writer, r R, o PrintOptions) error
}

// Name implements MethodInfo.
func (m *Method[P, R]) Name() string { return m.name }

// Summary implements MethodInfo.
func (m *Method[P, R]) Summary() string { return m.summary }

// FromView implements MethodInfo.
func (m *Method[P, R]) FromView() bool { return m.answer != nil }

// FromBundles implements MethodInfo.
func (m *Method[P, R]) FromBundles() bool { return m.bundles != nil }

// AnswerBundles answers p from a bundle View. It returns an *Error with
// CodeUnknownMethod for a method that a bundle View does not answer.
func (m *Method[P, R]) AnswerBundles(v *bundlecat.View, p P) (R, error) {
	if m.bundles == nil {
		var zero R
		return zero, Errorf(CodeUnknownMethod, "%s is not answered from bundles", m.name)
	}
	return m.bundles(v, p)
}

// Answer answers p from a View. It returns an *Error with CodeUnknownMethod
// for a method only the daemon answers.
func (m *Method[P, R]) Answer(v *catalog.View, p P) (R, error) {
	if m.answer == nil {
		var zero R
		return zero, Errorf(CodeUnknownMethod, "%s is answered by the daemon only", m.name)
	}
	return m.answer(v, p)
}

// AddsBundles reports whether the method's answer from a View takes in
// what the bundle repository the client stands in holds too (see
// AnswerWithBundles).
func (m *Method[P, R]) AddsBundles() bool { return m.addBundles != nil }

// AnswerWithBundles answers p from a View as Answer does, and adds what
// the bundle repository b stands in holds, for a method that reports it
// (diagnostics: what check reports in a bundle repository beside the
// project's collections). b may be nil: the client looks for no bundles.
func (m *Method[P, R]) AnswerWithBundles(v *catalog.View, b *bundlecat.View, p P) (R, error) {
	r, err := m.Answer(v, p)
	if err != nil || b == nil || m.addBundles == nil {
		return r, err
	}
	return m.addBundles(r, b, p), nil
}

// Print writes r as text.
func (m *Method[P, R]) Print(w io.Writer, r R, o PrintOptions) error {
	if m.print == nil {
		return PrintJSON(w, r)
	}
	return m.print(w, r, o)
}

// Decode decodes a request's params strictly (see DecodeParams).
func (m *Method[P, R]) Decode(params json.RawMessage) (P, error) {
	var p P
	if err := DecodeParams(params, &p); err != nil {
		return p, Errorf(CodeInvalidParams, "%s: %s", m.name, err.(*Error).Message)
	}
	return p, nil
}

// The methods. Keep Methods in step.
var (
	MethodCollections = &Method[ListParams, []CollectionInfo]{name: "collections",
		summary: "List every collection of every root, with its status",
		answer:  func(v *catalog.View, _ ListParams) ([]CollectionInfo, error) { return collections(v), nil },
		print:   printCollections}
	MethodResolve = &Method[NameParams, *ResolveResult]{name: "resolve",
		summary: "Show where a collection name resolves, what it shadows and what was skipped",
		answer:  func(v *catalog.View, p NameParams) (*ResolveResult, error) { return resolveView(v, p.Name), nil },
		print:   printResolve}
	MethodCollection = &Method[NameParams, *CollectionDetail]{name: "collection",
		summary: "Show a collection and its resources",
		answer:  func(v *catalog.View, p NameParams) (*CollectionDetail, error) { return collection(v, p.Name) },
		print:   printCollection}
	MethodProfiles = resourceMethod("profiles", "List the profiles of the winning collections", discovery.KindProfile)
	MethodAgents   = resourceMethod("agents", "List the agents of the winning collections", discovery.KindAgent)
	MethodContext  = resourceMethod("context", "List the context files of the winning collections", discovery.KindContext)
	MethodTools    = resourceMethod("tools", "List the scenario tools of the winning collections", discovery.KindTool)
	MethodModules  = resourceMethod("modules", "List the modules of the winning collections", discovery.KindModule)
	MethodProfile  = &Method[ProfileParams, *ProfileResult]{name: "profile",
		summary: "Show a profile (collection:name) and its extends chain",
		answer:  func(v *catalog.View, p ProfileParams) (*ProfileResult, error) { return profile(v, p.Ref, p.Merged) },
		print:   printProfile}
	MethodAgent = &Method[RefParams, *AgentResult]{name: "agent",
		summary: "Show an agent (collection:name)",
		answer:  func(v *catalog.View, p RefParams) (*AgentResult, error) { return agent(v, p.Ref) },
		print:   printAgent}
	MethodSearch = &Method[SearchParams, []ResourceInfo]{name: "search",
		summary: "Find resources whose name, path or description contains TEXT",
		answer:  func(v *catalog.View, p SearchParams) ([]ResourceInfo, error) { return search(v, p.Text), nil },
		print:   printResources}
	MethodDiagnostics = &Method[DiagnosticsParams, *DiagnosticsResult]{name: "diagnostics",
		summary: "List diagnostics, of everything or below PATH",
		answer: func(v *catalog.View, p DiagnosticsParams) (*DiagnosticsResult, error) {
			return diagnostics(v, p.Path), nil
		},
		addBundles: withBundleDiagnostics,
		print:      printDiagnostics}
	MethodDeps = &Method[NameParams, *DepsResult]{name: "deps",
		summary: "Show what a collection requires and who requires it",
		answer:  func(v *catalog.View, p NameParams) (*DepsResult, error) { return deps(v, p.Name) },
		print:   printDeps}
	MethodChanges = &Method[ChangesParams, *ChangesResult]{name: "changes",
		summary: "List the files that changed since a clock (needs the daemon)",
		print:   printChanges}
	MethodStatus = &Method[StatusParams, *Status]{name: "status",
		summary: "Show the daemon's state: roots, projects, counts, clock, warnings, bundles",
		print:   printStatus}
	MethodSubscribe = &Method[SubscribeParams, *SubscribeResult]{name: "subscribe",
		summary: "Stream the diagnostics of files as they change (notifications carry an Update)"}
	MethodAnalyze = &Method[AnalyzeParams, *AnalyzeResult]{name: "analyze",
		summary: "Diagnose, complete, resolve or describe an editor's buffer (the language server's question; see analyze.go)",
		print:   printAnalyze}
	MethodVersion = &Method[VersionParams, *DaemonInfo]{name: "version",
		summary: "Show the daemon's pid, build and how it was started; answered during the first scan too"}
	MethodShutdown = &Method[ShutdownParams, *ShutdownResult]{name: "shutdown",
		summary: "Stop the daemon once the requests in flight are answered"}
	MethodForget = &Method[ForgetParams, *ForgetResult]{name: "forget",
		summary: "Drop a registered project: its view, its watches, its place in the list kept for restarts",
		print:   printForget}
	MethodBundles = &Method[ListParams, []BundleInfo]{name: "bundles",
		summary: "List the bundles found, with name, version, namespace and where each is",
		bundles: func(v *bundlecat.View, _ ListParams) ([]BundleInfo, error) { return bundleInfos(v), nil },
		print:   printBundles}
	MethodBundle = &Method[BundleParams, *BundleResult]{name: "bundle",
		summary: "Show a bundle (a name, ns:path or a file); --composed: composed with its includes, as the runtime mounts it",
		bundles: bundleAnswer,
		print:   printBundle}
)

// Methods lists every method of the table.
var Methods = []MethodInfo{
	MethodCollections, MethodResolve, MethodCollection, MethodProfiles, MethodAgents, MethodContext,
	MethodTools, MethodModules, MethodProfile, MethodAgent, MethodSearch, MethodDiagnostics, MethodDeps,
	MethodChanges, MethodStatus, MethodSubscribe, MethodAnalyze, MethodVersion, MethodShutdown, MethodForget,
	MethodBundles, MethodBundle,
}

func resourceMethod(name, summary string, k discovery.Kind) *Method[ListParams, []ResourceInfo] {
	return &Method[ListParams, []ResourceInfo]{name: name, summary: summary,
		answer: func(v *catalog.View, _ ListParams) ([]ResourceInfo, error) { return resources(v, k), nil },
		print:  printResources}
}

// Call asks the daemon through c, and decodes the answer.
func Call[P, R any](ctx context.Context, c *Client, m *Method[P, R], p P) (R, Clock, error) {
	var r R
	clock, err := c.Call(ctx, m.name, p, &r)
	return r, clock, err
}

// Subscribe opens a subscription with m, whose notifications carry params
// of type N.
func Subscribe[P, R any](ctx context.Context, c *Client, m *Method[P, R], p P) (<-chan Notification, error) {
	return c.Subscribe(ctx, m.name, p)
}

// Handle registers fn for m on mux: the params are decoded strictly, and
// fn's result is the answer.
func Handle[P, R any](mux *Mux, m *Method[P, R], fn func(ctx context.Context, p P) (R, error)) {
	mux.Handle(m.name, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := m.Decode(raw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, p)
	})
}

// HandleStream registers fn for a method whose answer opens a
// subscription.
func HandleStream[P, R any](mux *Mux, m *Method[P, R], fn func(ctx context.Context, p P) (*Stream, error)) {
	mux.Handle(m.name, func(ctx context.Context, raw json.RawMessage) (any, error) {
		p, err := m.Decode(raw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, p)
	})
}

// String returns the method's name.
func (m *Method[P, R]) String() string { return fmt.Sprintf("method %s", m.name) }
