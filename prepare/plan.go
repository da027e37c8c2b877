package prepare

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// PlanFormat is the version of the prepared.json layout this package writes
// and reads; an artifact of another format is a miss.
const PlanFormat = 1

// Plan is the artifact of an entry, prepared.json: the bundle's mount plan
// with every module source resolved to a directory on this machine.
type Plan struct {
	Format int `json:"format"`
	Key    Key `json:"key"`
	// Bundle describes the manifest the plan was built from.
	Bundle          BundleInfo `json:"bundle"`
	DefaultProvider string     `json:"default_provider"`
	Session         Session    `json:"session"`
	Providers       []Module   `json:"providers"`
	Tools           []Module   `json:"tools"`
	Hooks           []Module   `json:"hooks"`
	Agents          []Agent    `json:"agents"`
	// Mentions are the manifest's and its agents' @bundle:path mentions,
	// resolved inside the bundle directory.
	Mentions []Mention `json:"mentions"`
	// Created is when the entry was built.
	Created time.Time `json:"created"`
}

// BundleInfo describes a bundle manifest.
type BundleInfo struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Manifest is the absolute path of bundle.md; Dir is its directory.
	Manifest string `json:"manifest"`
	Dir      string `json:"dir"`
	// SHA256 is the full hex digest of the manifest's bytes.
	SHA256 string `json:"sha256"`
}

// Session is the session block of a manifest or an agent.
type Session struct {
	// Modules maps a slot (orchestrator, context, provider) to its module.
	Modules map[string]Module `json:"modules,omitempty"`
	// Settings holds the keys that are not module entries, such as raw.
	Settings map[string]any `json:"settings,omitempty"`
}

// Module is one resolved module entry.
type Module struct {
	Module string `json:"module"`
	// Source is the source as written; "" when the entry has none and the
	// runtime finds the module by itself.
	Source string `json:"source,omitempty"`
	// Path is the directory to mount: a subdirectory of a clone in the
	// module cache, or a file or local source's directory.
	Path string `json:"path,omitempty"`
	// Commit is the commit a git source resolved to.
	Commit string         `json:"commit,omitempty"`
	Config map[string]any `json:"config,omitempty"`
}

// Agent is one agent the bundle includes, with its own module entries
// resolved like the bundle's.
type Agent struct {
	Name        string   `json:"name"`
	Path        string   `json:"path"`
	Description string   `json:"description,omitempty"`
	ModelRole   []string `json:"model_role,omitempty"`
	Session     *Session `json:"session,omitempty"`
	Providers   []Module `json:"providers,omitempty"`
	Tools       []Module `json:"tools,omitempty"`
	Hooks       []Module `json:"hooks,omitempty"`
}

// Mention is an @bundle:path mention and the file or directory it names.
type Mention struct {
	Text string `json:"text"`
	Path string `json:"path"`
}

// modules calls fn for every module entry of the plan, its agents' included.
func (p *Plan) modules(fn func(m *Module)) {
	each := func(s *Session, lists ...[]Module) {
		if s != nil {
			for slot, m := range s.Modules {
				fn(&m)
				s.Modules[slot] = m
			}
		}
		for _, l := range lists {
			for i := range l {
				fn(&l[i])
			}
		}
	}
	each(&p.Session, p.Providers, p.Tools, p.Hooks)
	for i := range p.Agents {
		a := &p.Agents[i]
		each(a.Session, a.Providers, a.Tools, a.Hooks)
	}
}

// validate reports whether p is a whole plan for key k: the shape a reader
// relies on, not the manifest's schema.
func (p *Plan) validate(k Key) error {
	switch {
	case p.Format != PlanFormat:
		return fmt.Errorf("format %d, want %d", p.Format, PlanFormat)
	case p.Key != k:
		return fmt.Errorf("key %s, want %s", p.Key, k)
	case p.Bundle.Name == "" || p.Bundle.Manifest == "":
		return errors.New("no bundle name or manifest path")
	case p.DefaultProvider == "":
		return errors.New("no default_provider")
	}
	var err error
	p.modules(func(m *Module) {
		switch {
		case err != nil:
		case m.Module == "":
			err = errors.New("a module entry has no module id")
		case m.Source != "" && !filepath.IsAbs(m.Path):
			err = fmt.Errorf("module %s has no resolved path", m.Module)
		}
	})
	if err != nil {
		return err
	}
	for _, a := range p.Agents {
		if a.Name == "" || a.Path == "" {
			return errors.New("an agent has no name or path")
		}
	}
	return nil
}
