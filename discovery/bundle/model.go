package bundle

import (
	"github.com/amplidex/amplidex/discovery/diag"
)

// Bundle is a bundle file as the runtime's Bundle.from_dict reads it, with
// the positions of what it declares.
type Bundle struct {
	Name        string // bundle.name: the namespace ("" when missing)
	Version     string // bundle.version as written ("1.0.0" when missing, as the runtime defaults it)
	Description string
	// NamespaceRoot is bundle.namespace_root: where the namespace's
	// agents/ and context/ live, relative to the file's directory.
	NamespaceRoot string
	NameRange     diag.Range

	// Data is the whole top-level mapping.
	Data *Map

	Includes []Include

	// Session and Spawn are the sections as written (nil when absent or
	// null); SessionSet and SpawnSet say whether the key is there at all.
	Session    any
	SessionSet bool
	Spawn      any
	SpawnSet   bool

	// Providers, Tools and Hooks are the module lists, each entry as the
	// runtime keeps it (a relative source made absolute from the file's
	// directory).
	Providers []Module
	Tools     []Module
	Hooks     []Module

	// Agents are the agents the bundle declares, in the order the runtime
	// keys them: agents.include names first, then inline definitions.
	Agents []AgentEntry

	// Context are the context.include paths and direct context mappings.
	Context []ContextRef

	// Keys holds the place of every key under session: and spawn:, by
	// its dotted path ("session.orchestrator.config.max_tokens").
	Keys map[string]diag.Range

	// HasInstruction says the Markdown body is not blank (the runtime's
	// instruction); the body itself is File.Body.
	HasInstruction bool

	// LoadError says why Bundle.from_dict would raise on the file; the
	// runtime then skips the include that names it. Empty when it loads.
	LoadError string
	// ComposeError says why composing this bundle with another raises
	// (a section the runtime copies as a dict is not one).
	ComposeError string
}

// Include is one entry of includes.
type Include struct {
	// Source is what the runtime reads: a string entry, or the value of
	// the entry's bundle key (empty when the entry has none: the runtime
	// skips it).
	Source string
	Range  diag.Range
}

// Module is one entry of providers, tools or hooks.
type Module struct {
	// ID is the entry's id, else its module: what composition merges by
	// (empty: composition drops the entry).
	ID string
	// Entry is the mapping as the runtime keeps it.
	Entry *Map
	Range diag.Range
}

// AgentEntry is one agent a bundle declares.
type AgentEntry struct {
	Name string
	// Value is {name: NAME} for an agents.include name, or the inline
	// definition.
	Value *Map
	// Included says the agent comes from agents.include (its file is
	// agents/NAME.md of its namespace); else it is defined inline.
	Included bool
	Range    diag.Range
}

// ContextRef is one context file a bundle declares.
type ContextRef struct {
	// Key is the name the runtime keys the file by: the include path as
	// written, or the direct mapping's key.
	Key string
	// Path is the path as written: ns:path (resolved after composition),
	// or relative to the bundle's directory.
	Path string
	// Namespaced says Path is ns:path (an include, resolved after
	// composition); Direct says it is a key: path mapping.
	Namespaced bool
	Direct     bool
	Range      diag.Range
}

// Agent is an agent file (agents/NAME.md).
type Agent struct {
	Name        string // meta.name, else the file's name
	Description string
	NameRange   diag.Range
	HasMeta     bool
	Meta        *Map // meta:, or the flat front matter the runtime reads instead
	Data        *Map
	Tools       []Module
	Providers   []Module
	Hooks       []Module
}

// Mode is a mode file (modes/NAME.md).
type Mode struct {
	Name        string
	Description string
	Shortcut    string
	NameRange   diag.Range
	Data        *Map
}

// Skill is a skill (skills/NAME/SKILL.md).
type Skill struct {
	Name        string
	Description string
	NameRange   diag.Range
	Data        *Map
}

// Recipe is a recipe file: its name, version and steps. Its long texts
// (block scalars of four lines or more, the prompts) are not decoded.
type Recipe struct {
	Name    string
	Version string
	Steps   []Step
}

// Step is one step of a recipe (of its stages, in order).
type Step struct {
	ID    string
	Type  string // agent, recipe or bash
	Agent string
	Range diag.Range
}
