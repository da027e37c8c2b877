package discovery

import (
	"strings"

	"github.com/amplidex/amplidex/discovery/diag"
)

// RootKind names one of the three collection roots.
type RootKind string

// The roots, highest precedence first.
const (
	RootProject RootKind = "project"
	RootUser    RootKind = "user"
	RootBundled RootKind = "bundled"
	// RootArgument holds collections named on the command line (`check
	// DIR`), which take precedence over every root.
	RootArgument RootKind = "argument"
)

// Root is a directory that holds collections.
type Root struct {
	Kind RootKind `json:"kind"`
	Path string   `json:"path"`
}

// Kind is the kind of a resource inside a collection.
type Kind string

// The five resource kinds of the collection format.
const (
	KindProfile Kind = "profile"
	KindAgent   Kind = "agent"
	KindContext Kind = "context"
	KindTool    Kind = "scenario-tool"
	KindModule  Kind = "module"
)

// Kinds lists the resource kinds in the order the spec gives them.
var Kinds = []Kind{KindProfile, KindAgent, KindContext, KindTool, KindModule}

// Dir returns the directory, relative to a collection's resource base, that
// holds resources of kind k.
func (k Kind) Dir() string {
	switch k {
	case KindProfile:
		return "profiles"
	case KindAgent:
		return "agents"
	case KindContext:
		return "context"
	case KindTool:
		return "scenario-tools"
	case KindModule:
		return "modules"
	}
	return ""
}

// Resource is one profile, agent, context file, scenario tool or module.
type Resource struct {
	Kind Kind `json:"kind"`
	// Name is the file stem for profiles and agents, the path below
	// context/ for context files ("shared/base.md"), and the directory name
	// for scenario tools and modules.
	Name string `json:"name"`
	// Path is absolute.
	Path string `json:"path"`
	// Rel is Path relative to the collection's resource base, slash-separated
	// ("profiles/dev.md").
	Rel string `json:"rel"`
}

// Layout is how a collection arranges its resources.
type Layout string

// The layouts of the collection format.
const (
	LayoutFlat   Layout = "flat"   // resources at the collection root
	LayoutNested Layout = "nested" // resources inside the Python package directory
	LayoutHybrid Layout = "hybrid" // pyproject in the package, resources at the root
	LayoutNone   Layout = "none"   // no resource directory at all
)

// Metadata is what pyproject.toml says about a collection.
type Metadata struct {
	Name         string            `json:"name"`
	Version      string            `json:"version"`
	Description  string            `json:"description"`
	URLs         map[string]string `json:"urls,omitempty"`
	Author       string            `json:"author,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	// Requires maps a collection name to a version constraint, in file order.
	Requires []Requirement `json:"requires,omitempty"`
}

// clone returns a copy of m that shares no memory with it; nil for nil.
func (m *Metadata) clone() *Metadata {
	if m == nil {
		return nil
	}
	c := &Metadata{Name: strings.Clone(m.Name), Version: strings.Clone(m.Version),
		Description: strings.Clone(m.Description), Author: strings.Clone(m.Author)}
	if m.URLs != nil {
		c.URLs = make(map[string]string, len(m.URLs))
		for k, v := range m.URLs {
			c.URLs[strings.Clone(k)] = strings.Clone(v)
		}
	}
	if m.Capabilities != nil {
		c.Capabilities = make([]string, len(m.Capabilities))
		for i, v := range m.Capabilities {
			c.Capabilities[i] = strings.Clone(v)
		}
	}
	if m.Requires != nil {
		c.Requires = make([]Requirement, len(m.Requires))
		for i, r := range m.Requires {
			c.Requires[i] = Requirement{Name: strings.Clone(r.Name), Constraint: strings.Clone(r.Constraint), Range: r.Range}
		}
	}
	return c
}

// Requirement is one entry of [tool.amplifier.collection.requires].
type Requirement struct {
	Name       string `json:"name"`
	Constraint string `json:"constraint"`
	// Range is where the entry sits in its pyproject.toml.
	Range diag.Range `json:"range"`
}
