package lint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/config"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
	"github.com/amplidex/amplidex/query"
)

// Workspace is what a command works on: the project, the roots in
// precedence order and the configuration. The command line builds one
// per run from its flags and environment; Check, the policy and the
// daemon's client all read it. Its fields are set before it is first
// used and not written after.
type Workspace struct {
	// Project is the project directory: --project, else the nearest
	// ancestor of the working directory with .amplifier/ ("" when that
	// search was refused), else the working directory.
	Project string
	// Home is the home directory.
	Home string
	// Bundled are the bundled roots, from the configuration or
	// $AMPLIDEX_BUNDLED.
	Bundled []string
	// Roots are the project, user and bundled roots, in precedence order.
	Roots []discovery.Root
	// Config is the user's configuration: an empty one under Isolated.
	Config *config.Config
	// Paths are amplidex's own files.
	Paths query.Paths
	// Isolated is set under --isolated: the configuration is empty, and
	// the roots are the project's alone.
	Isolated bool
	// Warn says a warning on stderr, once per run however often it is
	// said (a project's file of another user, ignored); nil: none.
	Warn func(string)
	// AmplifierHome is $AMPLIFIER_HOME ("" when unset: ~/.amplifier).
	AmplifierHome string

	// tune, when set, adjusts every Loader the workspace makes (check
	// remembers what they list and read).
	tune func(*discovery.Loader)
	// here is the collection the working directory is in, in no root,
	// found once (see StandIn).
	here     string
	hereOnce sync.Once
}

// RootsHome is the home directory whose user root the workspace reads:
// none under --isolated.
func (ws *Workspace) RootsHome() string {
	if ws.Isolated {
		return ""
	}
	return ws.Home
}

// DaemonProject is the project a daemon query is about: the project
// directory when it has a .amplifier directory, else none (the daemon then
// answers from the user and bundled roots, and registers nothing).
func (ws *Workspace) DaemonProject() string {
	if ws.Project == "" {
		return "" // the search for .amplifier was refused
	}
	if fi, err := os.Stat(filepath.Join(ws.Project, ".amplifier")); err == nil && fi.IsDir() {
		return ws.Project
	}
	return ""
}

// SchemaOptions turns the configuration into schema options.
func (ws *Workspace) SchemaOptions() schema.Options {
	opts := schema.Options{UnknownKeySeverity: diag.SeverityError}
	if ws.Config.Schema.UnknownKey == "warning" {
		opts.UnknownKeySeverity = diag.SeverityWarning
	}
	return opts
}

// errText is err's message without the path an os error repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Loader returns a Loader configured for the workspace.
func (ws *Workspace) Loader() *discovery.Loader {
	l := &discovery.Loader{Schema: ws.SchemaOptions()}
	if ws.tune != nil {
		ws.tune(l)
	}
	return l
}

// Base is the directory paths in the configuration and in baselines are
// taken from: the project directory, else the working directory.
func (ws *Workspace) Base() string {
	if ws.Project != "" {
		return ws.Project
	}
	wd, _ := os.Getwd()
	return wd
}

// Common returns the parameters every question to the daemon carries:
// the project, and this client's own roots, so that the daemon answers
// over them whatever roots its own configuration names, with the
// collection the working directory is in (see StandIn).
func (ws *Workspace) Common(noSync bool) query.Common {
	roots := ws.ClientRoots()
	roots.Collection = ws.StandIn()
	return query.Common{Project: ws.DaemonProject(), NoSync: noSync, Roots: roots, Bundles: ws.BundleScope()}
}

// ClientRoots returns this client's user and bundled roots, as the
// daemon takes them (absolute and clean).
func (ws *Workspace) ClientRoots() *query.Roots {
	r := &query.Roots{Home: ws.RootsHome()}
	for _, b := range ws.Bundled {
		if abs, err := filepath.Abs(b); err == nil {
			r.Bundled = append(r.Bundled, abs)
		}
	}
	return r
}

// Catalog returns an in-process catalog of the workspace's roots.
func (ws *Workspace) Catalog() *catalog.Catalog {
	return catalog.New(catalog.Options{Loader: ws.Loader(), Home: ws.RootsHome(), Bundled: ws.Bundled})
}

// View reads the project's roots in process and returns their View, and
// the catalog it came from.
func (ws *Workspace) View() (*catalog.View, *catalog.Catalog) {
	cat := ws.Catalog()
	project := ws.DaemonProject()
	st, _ := cat.AddProject(project)
	v, _ := st.View(cat.ProjectKey(project))
	return v, cat
}
