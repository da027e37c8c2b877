package compose

import (
	"github.com/amplidex/amplidex/discovery/bundle"
)

// Origin is where something of a composition was declared.
type Origin struct {
	Path string `json:"path"`
	Line int    `json:"line"` // 1-based
}

// value is a bundle as the runtime's Bundle dataclass holds it, loaded or
// composed, with the origin of each part. A value is never modified once
// built: composing makes a new one.
type value struct {
	name, version, description string
	nameSet                    bool

	session, spawn     any // *bundle.Map, or what the file had (nil: absent)
	sessionOK, spawnOK bool

	providers, tools, hooks []module
	agents                  []agent
	context                 []ctxEntry // resolved (path) and pending (ns:path) context, in key order
	instruction             *bundle.File
	basePath                string
	sourceBasePaths         []nsPath // in insertion order

	// origins of session and spawn keys: dotted path → where it was set last.
	keyOrigins map[string]Origin
	// files are the bundle files composed into this value, in order.
	files []*bundle.File
	// composeErr says why composing this value raises.
	composeErr string
	// bare says the value was loaded without its includes.
	bare bool
}

type module struct {
	id     string // "" is dropped by a merge
	idKey  string // the id as a dict key (type included)
	entry  *bundle.Map
	origin Origin
	merged []Origin // later declarations merged into it
}

type agent struct {
	name     string
	value    *bundle.Map
	included bool
	origin   Origin
}

type ctxEntry struct {
	key     string
	path    string // resolved path ("" while pending)
	ref     string // the ns:path of a pending entry
	pending bool
	origin  Origin
}

type nsPath struct {
	ns, dir string
}

// getNS returns the directory of namespace ns.
func (v *value) getNS(ns string) (string, bool) {
	for _, p := range v.sourceBasePaths {
		if p.ns == ns {
			return p.dir, true
		}
	}
	return "", false
}

func (v *value) setNS(ns, dir string) {
	for i := range v.sourceBasePaths {
		if v.sourceBasePaths[i].ns == ns {
			v.sourceBasePaths[i].dir = dir
			return
		}
	}
	v.sourceBasePaths = append(v.sourceBasePaths, nsPath{ns, dir})
}

// compose is Bundle.compose(other) of the runtime: the result is a new
// value; neither input changes.
func compose(self, other *value) (*value, string) {
	if self.composeErr != "" {
		return nil, self.composeErr
	}
	if other.composeErr != "" {
		return nil, other.composeErr
	}
	r := &value{
		name: self.name, version: self.version, description: self.description, nameSet: self.nameSet,
		session: self.session, spawn: self.spawn, sessionOK: true, spawnOK: true,
		providers:       self.providers,
		tools:           self.tools,
		hooks:           self.hooks,
		agents:          append([]agent(nil), self.agents...),
		instruction:     self.instruction,
		basePath:        self.basePath,
		sourceBasePaths: append([]nsPath(nil), self.sourceBasePaths...),
		keyOrigins:      map[string]Origin{},
		files:           append(append([]*bundle.File(nil), self.files...), other.files...),
	}
	for k, o := range self.keyOrigins {
		r.keyOrigins[k] = o
	}
	if self.name != "" && self.basePath != "" {
		if _, ok := r.getNS(self.name); !ok {
			r.setNS(self.name, self.basePath)
		}
	}
	for _, c := range self.context {
		c.key = prefixed(self.name, c.key)
		r.setContext(c)
	}
	for _, p := range other.sourceBasePaths {
		if p.ns == other.name {
			continue
		}
		if _, ok := r.getNS(p.ns); !ok {
			r.setNS(p.ns, p.dir)
		}
	}
	if other.name != "" {
		if _, ok := r.getNS(other.name); !ok {
			if d, ok := other.getNS(other.name); ok {
				r.setNS(other.name, d)
			} else if other.basePath != "" {
				r.setNS(other.name, other.basePath)
			}
		}
	}
	if other.name != "" {
		r.name = other.name
	}
	if other.version != "" {
		r.version = other.version
	}
	if other.description != "" {
		r.description = other.description
	}
	r.session = deepMerge(asMap(self.session), asMap(other.session))
	r.spawn = deepMerge(asMap(self.spawn), asMap(other.spawn))
	for k, o := range other.keyOrigins {
		r.keyOrigins[k] = o
	}
	r.providers = mergeModules(self.providers, other.providers)
	r.tools = mergeModules(self.tools, other.tools)
	r.hooks = mergeModules(self.hooks, other.hooks)
	for _, a := range other.agents {
		r.agents = setAgent(r.agents, a)
	}
	for _, c := range other.context {
		c.key = prefixed(other.name, c.key)
		r.setContext(c)
	}
	if other.instruction != nil {
		r.instruction = other.instruction
	}
	if other.basePath != "" {
		r.basePath = other.basePath
	}
	return r, ""
}

// prefixed is the context key a bundle named name gives key.
func prefixed(name, key string) string {
	if name == "" || containsColon(key) {
		return key
	}
	return name + ":" + key
}

func containsColon(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return true
		}
	}
	return false
}

// setContext sets a context key: a known key keeps its place.
func (v *value) setContext(c ctxEntry) {
	for i := range v.context {
		if v.context[i].key == c.key && v.context[i].pending == c.pending {
			v.context[i] = c
			return
		}
	}
	v.context = append(v.context, c)
}

func setAgent(as []agent, a agent) []agent {
	for i := range as {
		if as[i].name == a.name {
			as[i] = a
			return as
		}
	}
	return append(as, a)
}

func asMap(v any) *bundle.Map {
	m, _ := v.(*bundle.Map)
	return m
}

// deepMerge is the runtime's deep_merge: child's keys override parent's,
// mappings merge, lists concatenate without repeats, the rest is replaced.
func deepMerge(parent, child *bundle.Map) *bundle.Map {
	var b bundle.MapBuilder
	for k, v := range parent.All() {
		b.Set(k, v)
	}
	for k, cv := range child.All() {
		pv, ok := parent.Get(k)
		if !ok {
			b.Set(k, cv)
			continue
		}
		pm, pIsMap := pv.(*bundle.Map)
		cm, cIsMap := cv.(*bundle.Map)
		pl, pIsList := pv.([]any)
		cl, cIsList := cv.([]any)
		switch {
		case pIsMap && cIsMap:
			b.Set(k, deepMerge(pm, cm))
		case pIsList && cIsList:
			seen := map[string]bool{}
			merged := make([]any, 0, len(pl)+len(cl))
			for _, item := range append(append([]any(nil), pl...), cl...) {
				key := bundle.Key(item)
				if seen[key] {
					continue
				}
				seen[key] = true
				merged = append(merged, item)
			}
			b.Set(k, merged)
		default:
			b.Set(k, cv)
		}
	}
	return b.Map()
}

// mergeModules is the runtime's merge_module_lists: entries by id (an
// entry without one is dropped); a known id deep-merges, a new one is
// appended.
func mergeModules(parent, child []module) []module {
	var out []module
	at := map[string]int{}
	for _, m := range parent {
		if m.id == "" {
			continue
		}
		if i, ok := at[m.idKey]; ok {
			out[i] = m
			continue
		}
		at[m.idKey] = len(out)
		out = append(out, m)
	}
	for _, m := range child {
		if m.id == "" {
			continue
		}
		if i, ok := at[m.idKey]; ok {
			prev := out[i]
			out[i] = module{id: prev.id, idKey: prev.idKey, entry: deepMerge(prev.entry, m.entry),
				origin: prev.origin, merged: append(append([]Origin(nil), prev.merged...), m.origin)}
			continue
		}
		at[m.idKey] = len(out)
		out = append(out, m)
	}
	return out
}
