package main

import (
	"os"
	"path/filepath"

	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/query"
)

// bundleScope is where this client looks for bundles: the working
// directory, $AMPLIFIER_HOME (else ~/.amplifier), the home directory and
// the project (its .amplifier/bundles and settings files).
func (ws *workspace) bundleScope() *query.BundleScope {
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	s := &query.BundleScope{WorkDir: filepath.Clean(wd), Home: ws.home, ProjectDir: ws.daemonProject()}
	switch {
	case ws.amplifierHome != "":
		if abs, err := filepath.Abs(ws.amplifierHome); err == nil {
			s.AmplifierHome = abs
		}
	case ws.home != "":
		s.AmplifierHome = filepath.Join(ws.home, ".amplifier")
	}
	return s
}

// bundleView reads the bundles of this client's scope in process.
func (ws *workspace) bundleView() *bundlecat.View {
	var s query.BundleScope
	if p := ws.bundleScope(); p != nil {
		s = *p
	}
	return bundlecat.New(bundlecat.Options{}).View(s.Env())
}
