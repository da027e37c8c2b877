package lint

import (
	"os"
	"path/filepath"

	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/query"
)

// BundleScope is where this client looks for bundles: the working
// directory, $AMPLIFIER_HOME (else ~/.amplifier), the home directory and
// the project (its .amplifier/bundles and settings files).
func (ws *Workspace) BundleScope() *query.BundleScope {
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	s := &query.BundleScope{WorkDir: filepath.Clean(wd), Home: ws.Home, ProjectDir: ws.DaemonProject()}
	switch {
	case ws.AmplifierHome != "":
		if abs, err := filepath.Abs(ws.AmplifierHome); err == nil {
			s.AmplifierHome = abs
		}
	case ws.Home != "":
		s.AmplifierHome = filepath.Join(ws.Home, ".amplifier")
	}
	return s
}

// BundleView reads the bundles of this client's scope in process.
func (ws *Workspace) BundleView() *bundlecat.View {
	var s query.BundleScope
	if p := ws.BundleScope(); p != nil {
		s = *p
	}
	return bundlecat.New(bundlecat.Options{}).View(s.Env())
}
