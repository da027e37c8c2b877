package bundle

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/schema"
)

var (
	bundleKeys     = keyset{"bundle", "includes", "session", "providers", "tools", "hooks", "agents", "context", "spawn", "default_provider"}
	bundleMetaKeys = keyset{"name", "version", "description", "namespace_root"}
	moduleKeys     = keyset{"module", "source", "config", "id"}
	spawnKeys      = keyset{"exclude_tools", "tools"}
	sessionModules = []string{"orchestrator", "context"}
)

const (
	sevErr  = diag.SeverityError
	sevWarn = diag.SeverityWarning
)

// bundle reads a bundle's sections as Bundle.from_dict does, reporting
// what the runtime would crash on, ignore or silently drop.
func (d *doc) bundle(root *yaml.Node, m *Map, f *File, opts Options) *Bundle {
	b := &Bundle{Data: m, Version: "1.0.0"}
	dir := filepath.Dir(f.Path)
	b.HasInstruction = f.Markdown && f.Body.Len() > 0
	loadErr := func(format string, args ...any) {
		if b.LoadError == "" {
			b.LoadError = fmt.Sprintf(format, args...)
		}
	}
	for _, p := range pairs(root) {
		if !containsStr(bundleKeys, p.name) {
			d.unknownKey(p, "", bundleKeys)
		}
	}

	// bundle:
	bk, bv := lookup(root, "bundle")
	switch {
	case bk == nil:
		d.diags.add(CodeMissingName, sevWarn, d.lines.LineRange(d.base),
			"this bundle has no bundle: section, so no bundle.name: it registers no namespace and its context keys go unprefixed; add bundle: {name: …, version: …, description: …}")
	case !isMapping(bv):
		d.wrongType(bv, sevErr, "bundle:", "a mapping", "the runtime cannot load the file: write bundle: {name: …, version: …}")
		loadErr("bundle: is %s, not a mapping", kindName(bv))
	default:
		d.bundleMeta(b, bk, bv)
		d.moveIncludes(root, bk, bv)
	}

	b.Includes = d.includes(root, loadErr)

	// session and spawn: mappings the runtime deep-merges.
	for _, sec := range []string{"session", "spawn"} {
		k, v := lookup(root, sec)
		if k == nil {
			continue
		}
		val := m.Value(sec)
		d.keyPaths(b, sec, k, v, 0)
		if sec == "session" {
			b.Session, b.SessionSet = val, true
		} else {
			b.Spawn, b.SpawnSet = val, true
		}
		if !isMapping(v) {
			d.wrongType(v, sevErr, sec+":", "a mapping", "the runtime crashes composing it: write "+sec+": {…} or remove the key")
			if b.ComposeError == "" {
				b.ComposeError = sec + ": is " + kindName(v) + ", not a mapping"
			}
			continue
		}
		if sec == "spawn" {
			d.checkKeys(v, "spawn", spawnKeys)
			continue
		}
		for _, name := range sessionModules {
			if mk, mv := lookup(v, name); mk != nil {
				d.moduleEntry(mv, "session."+name)
			}
		}
	}

	b.Providers = d.modules(root, m, "providers", dir, loadErr)
	b.Tools = d.modules(root, m, "tools", dir, loadErr)
	b.Hooks = d.modules(root, m, "hooks", dir, loadErr)
	b.Agents = d.bundleAgents(root, m, loadErr)
	b.Context = d.context(root, loadErr)

	if dk, dv := lookup(root, "default_provider"); dk != nil {
		if s, ok := stringOf(dv); !ok || s == "" {
			d.wrongType(dv, sevErr, "default_provider", "a provider name", "write default_provider: NAME")
		}
	} else if opts.Manifest {
		// The message of every surface (the editor offers to add the key).
		d.diags.add(CodeDefaultProvider, sevErr, d.lines.LineRange(d.base), "%s", schema.BundleDefaultProviderMessage)
	}
	return b
}

// bundleMeta reads bundle: {name, version, description, namespace_root}.
func (d *doc) bundleMeta(b *Bundle, bk, bv *yaml.Node) {
	for _, p := range pairs(bv) {
		switch {
		case p.name == "includes":
			d.diags.add(CodeIncludesUnderBundle, sevErr, d.rangeOf(p.key),
				"includes is written under bundle:, where the runtime never looks, so none of these bundles is included: move includes: to the top level, beside bundle:")
		case !containsStr(bundleMetaKeys, p.name):
			d.unknownKey(p, "bundle:", bundleMetaKeys)
		}
	}
	nk, nv := lookup(bv, "name")
	switch name, ok := stringOf(nv); {
	case nk == nil || isNull(nv) || (ok && name == ""):
		d.diags.add(CodeMissingName, sevWarn, d.rangeOf(bk),
			"bundle.name is missing: the bundle registers no namespace and its context keys go unprefixed; add name: under bundle:")
	case !ok && !isMapping(nv) && !isSeq(nv):
		b.Name = deref(nv).Value
		b.NameRange = d.rangeOf(nv)
		d.wrongType(nv, sevWarn, "bundle.name", "a string", "quote it")
	case !ok:
		d.wrongType(nv, sevErr, "bundle.name", "a string", "")
	default:
		b.Name, b.NameRange = name, d.rangeOf(nv)
	}
	if vk, vv := lookup(bv, "version"); vk != nil {
		switch s, ok := stringOf(vv); {
		case ok:
			b.Version = s
		case isNull(vv):
			b.Version = ""
		case isMapping(vv) || isSeq(vv):
			d.wrongType(vv, sevErr, "bundle.version", "a string", "write version: 1.0.0")
			b.Version = ""
		default:
			b.Version = deref(vv).Value
		}
	}
	if _, dv := lookup(bv, "description"); dv != nil {
		if s, ok := stringOf(dv); ok {
			b.Description = s
		} else if !isNull(dv) {
			d.wrongType(dv, sevWarn, "bundle.description", "a string", "")
		}
	}
	if _, nr := lookup(bv, "namespace_root"); nr != nil {
		if s, ok := stringOf(nr); ok {
			b.NamespaceRoot = s
		} else if !isNull(nr) {
			d.wrongType(nr, sevErr, "bundle.namespace_root", "a path", "")
		}
	}
}

// includes reads the includes list as _parse_include reads each entry.
func (d *doc) includes(root *yaml.Node, loadErr func(string, ...any)) []Include {
	k, v := lookup(root, "includes")
	if k == nil || isNull(v) {
		return nil
	}
	var out []Include
	switch {
	case isMapping(v):
		d.wrongType(v, sevErr, "includes", "a list", "the runtime takes each key as a source: write includes: [- bundle: SOURCE]")
		for _, p := range pairs(v) {
			out = append(out, Include{Source: p.name, Range: d.rangeOf(p.key)})
		}
		return out
	case !isSeq(v):
		if _, ok := stringOf(v); ok {
			d.wrongType(v, sevErr, "includes", "a list", "the runtime reads each character as a bundle: write includes: [- bundle: SOURCE]")
			return nil
		}
		d.wrongType(v, sevErr, "includes", "a list", "the runtime crashes on it: write includes: [- bundle: SOURCE]")
		loadErr("includes is %s, not a list", kindName(v))
		return nil
	}
	for _, it := range items(v) {
		inc := Include{Range: d.rangeOf(it)}
		src := it // the node of the source
		switch {
		case isMapping(it):
			bk, bv := lookup(it, "bundle")
			if bk == nil {
				d.includeWithoutBundleKey(it)
				continue
			}
			for _, p := range pairs(it) {
				if p.name != "bundle" {
					d.unknownKey(p, "an includes entry", keyset{"bundle"})
				}
			}
			s, ok := stringOf(bv)
			switch {
			case ok:
				inc.Source, inc.Range, src = s, d.rangeOf(bv), bv
			case isNull(bv):
				d.wrongType(bv, sevErr, "bundle:", "a source", "the runtime skips the entry")
				continue
			case isMapping(bv) || isSeq(bv):
				d.wrongType(bv, sevErr, "bundle:", "a source string", "the runtime cannot load it")
				continue
			default:
				inc.Source, inc.Range = deref(bv).Value, d.rangeOf(bv)
			}
		default:
			s, ok := stringOf(it)
			if !ok {
				d.wrongType(it, sevErr, "an includes entry", "a source or {bundle: SOURCE}", "the runtime skips it")
				continue
			}
			inc.Source = s
		}
		if strings.HasPrefix(inc.Source, "@") {
			d.diags.add(CodeAtInYAML, sevErr, inc.Range,
				"%s starts with @, which only Markdown mentions take: the runtime resolves it to nothing; write %s", quote(inc.Source), quote(strings.TrimPrefix(inc.Source, "@")))
			d.dropAt(CodeAtInYAML, inc.Range, src)
		}
		out = append(out, inc)
	}
	return out
}

// includeWithoutBundleKey reports an includes entry the runtime skips
// because it has no bundle: key (- behavior: x).
func (d *doc) includeWithoutBundleKey(it *yaml.Node) {
	ps := pairs(it)
	r := d.rangeOf(it)
	fix := "write - bundle: SOURCE"
	had := ""
	if len(ps) > 0 {
		r = d.rangeOf(ps[0].key)
		had = " (it has " + quote(ps[0].name+":") + ")"
		if s, ok := stringOf(ps[0].val); ok {
			fix = "write - bundle: " + s
		}
	}
	d.diags.add(CodeIncludeNoBundleKey, sevErr, r,
		"this includes entry has no bundle: key%s, so the runtime skips it without a word: %s", had, fix)
	if len(ps) == 1 {
		if _, ok := stringOf(ps[0].val); ok {
			d.renameKey(CodeIncludeNoBundleKey, r, ps[0], "bundle")
		}
	}
}

// modules reads providers, tools or hooks as _validate_module_list does.
func (d *doc) modules(root *yaml.Node, m *Map, sec, dir string, loadErr func(string, ...any)) []Module {
	k, v := lookup(root, sec)
	if k == nil || !Truthy(m.Value(sec)) {
		return nil
	}
	if isMapping(v) {
		ex := "- module: MODULE-ID"
		if ps := pairs(v); len(ps) > 0 {
			ex = "- module: " + ps[0].name
		}
		d.wrongType(v, sevErr, sec+":", "a list", "the runtime cannot load the file (malformed "+sec+"): write each module as a list entry, "+sec+": ["+ex+", source: …]")
		loadErr("%s: is a mapping, not a list", sec)
		return nil
	}
	if !isSeq(v) {
		d.wrongType(v, sevErr, sec+":", "a list", "the runtime cannot load the file: write "+sec+": [- module: MODULE-ID, source: …]")
		loadErr("%s: is %s, not a list", sec, kindName(v))
		return nil
	}
	vals, _ := m.Value(sec).([]any)
	var out []Module
	for i, it := range items(v) {
		if !isMapping(it) {
			d.wrongType(it, sevErr, sec+" entry", "a mapping", "the runtime cannot load the file: write - module: MODULE-ID, source: …")
			loadErr("%s[%d] is %s, not a mapping", sec, i, kindName(it))
			continue
		}
		var entry *Map
		if i < len(vals) {
			entry, _ = vals[i].(*Map)
		}
		out = append(out, d.module(it, entry, sec, dir))
	}
	return out
}

// module reads one module entry; a relative source is made absolute from
// dir, as the runtime does when it loads the file.
func (d *doc) module(it *yaml.Node, entry *Map, sec, dir string) Module {
	mod := Module{Entry: entry, Range: d.rangeOf(it)}
	d.moduleEntry(it, sec)
	id := entry.Value("id")
	if !Truthy(id) {
		id = entry.Value("module")
	}
	if Truthy(id) {
		if s, ok := id.(string); ok {
			mod.ID = s
		} else {
			mod.ID = keyText(id)
		}
	}
	if src, ok := entry.Value("source").(string); ok && (strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../")) {
		var nb MapBuilder
		for k, v := range entry.All() {
			nb.Set(k, v)
		}
		nb.Set("source", filepath.Clean(filepath.Join(dir, src)))
		mod.Entry = nb.Map()
	}
	return mod
}

// moduleEntry checks the keys of a module entry.
func (d *doc) moduleEntry(it *yaml.Node, where string) {
	if !isMapping(it) {
		d.wrongType(it, sevErr, where, "a module entry", "write {module: MODULE-ID, source: …}")
		return
	}
	d.checkKeys(it, where+" entry", moduleKeys)
	mk, mv := lookup(it, "module")
	ik, _ := lookup(it, "id")
	switch {
	case mk == nil && ik == nil:
		d.diags.add(CodeModuleNoID, sevErr, d.rangeOf(it),
			"this %s entry has no module: composition drops it without a word; add module: MODULE-ID", where)
	case mk != nil:
		if s, ok := stringOf(mv); !ok || s == "" {
			d.wrongType(mv, sevErr, "module", "a module id", "write module: MODULE-ID")
		}
	}
	if sk, sv := lookup(it, "source"); sk != nil && !isMapping(sv) {
		if _, ok := stringOf(sv); !ok {
			d.wrongType(sv, sevErr, "source", "a URI or path", "write source: git+https://…@ref or ./modules/NAME")
		}
	}
	if ck, cv := lookup(it, "config"); ck != nil && !isMapping(cv) && !isNull(cv) {
		d.wrongType(cv, sevErr, "config", "a mapping", "")
	}
}

// bundleAgents reads a bundle's agents: section as _parse_agents does.
func (d *doc) bundleAgents(root *yaml.Node, m *Map, loadErr func(string, ...any)) []AgentEntry {
	k, v := lookup(root, "agents")
	val := m.Value("agents")
	if k == nil || !Truthy(val) {
		return nil
	}
	switch {
	case isSeq(v) || (!isMapping(v) && func() bool { _, ok := stringOf(v); return ok }()):
		d.wrongType(v, sevErr, "a bundle's agents:", "a mapping", "the runtime declares no agent from it (a string or list is an agent's delegation list): write agents: {include: [ns:name]}")
		return nil
	case !isMapping(v):
		d.wrongType(v, sevErr, "agents:", "a mapping", "the runtime crashes on it: write agents: {include: [ns:name]}")
		loadErr("agents: is %s", kindName(v))
		return nil
	}
	am, _ := val.(*Map)
	var out []AgentEntry
	set := func(e AgentEntry) {
		for i := range out {
			if out[i].Name == e.Name {
				out[i].Value, out[i].Included = e.Value, e.Included
				return
			}
		}
		out = append(out, e)
	}
	if ik, iv := lookup(v, "include"); ik != nil {
		switch {
		case isSeq(iv):
			for _, it := range items(iv) {
				if isMapping(it) || isSeq(it) {
					d.wrongType(it, sevErr, "an agents.include entry", "a name", "the runtime cannot load the file")
					loadErr("agents.include holds %s", kindName(it))
					continue
				}
				name, ok := stringOf(it)
				if !ok {
					name = deref(it).Value
				}
				if strings.HasPrefix(name, "@") {
					d.diags.add(CodeAtInYAML, sevErr, d.rangeOf(it),
						"%s starts with @, which only Markdown mentions take: the runtime finds no agent by that name; write %s", quote(name), quote(strings.TrimPrefix(name, "@")))
					d.dropAt(CodeAtInYAML, d.rangeOf(it), it)
				}
				var nb MapBuilder
				nb.Set("name", name)
				set(AgentEntry{Name: name, Value: nb.Map(), Included: true, Range: d.rangeOf(it)})
			}
		case isNull(iv):
			d.wrongType(iv, sevErr, "agents.include", "a list", "the runtime crashes on it")
			loadErr("agents.include is null")
		default:
			d.wrongType(iv, sevErr, "agents.include", "a list", "the runtime reads it character by character: write include: [ns:name]")
		}
	}
	for _, p := range pairs(v) {
		if p.name == "include" {
			continue
		}
		if !isMapping(p.val) {
			d.wrongType(p.val, sevErr, "the inline agent "+quote(p.name), "a mapping", "the runtime ignores it")
			continue
		}
		def, _ := am.Value(p.name).(*Map)
		set(AgentEntry{Name: p.name, Value: def, Range: d.rangeOf(p.key)})
	}
	return out
}

// context reads a bundle's context: section as _parse_context does.
func (d *doc) context(root *yaml.Node, loadErr func(string, ...any)) []ContextRef {
	k, v := lookup(root, "context")
	if k == nil || isNull(v) {
		return nil
	}
	if !isMapping(v) {
		if isSeq(v) && len(items(v)) == 0 {
			return nil
		}
		fix := "the runtime crashes loading the file: write context: {include: [ns:path]}"
		d.wrongType(v, sevErr, "context:", "a mapping", fix)
		loadErr("context: is %s, not a mapping", kindName(v))
		return nil
	}
	var out []ContextRef
	if ik, iv := lookup(v, "include"); ik != nil {
		switch {
		case isSeq(iv):
			for _, it := range items(iv) {
				p, ok := stringOf(it)
				if !ok {
					d.wrongType(it, sevErr, "a context.include entry", "a path", "the runtime crashes on it")
					loadErr("context.include holds %s", kindName(it))
					continue
				}
				ref := ContextRef{Key: p, Path: p, Namespaced: strings.Contains(p, ":"), Range: d.rangeOf(it)}
				if strings.HasPrefix(p, "@") {
					d.diags.add(CodeAtInYAML, sevErr, ref.Range,
						"%s starts with @, which only Markdown mentions take: the runtime never resolves it and the file contributes nothing; write %s", quote(p), quote(strings.TrimPrefix(p, "@")))
					d.dropAt(CodeAtInYAML, ref.Range, it)
				}
				out = append(out, ref)
			}
		case isNull(iv):
			d.wrongType(iv, sevErr, "context.include", "a list", "the runtime crashes on it")
			loadErr("context.include is null")
		default:
			d.wrongType(iv, sevErr, "context.include", "a list", "the runtime reads it character by character: write include: [ns:path]")
		}
	}
	for _, p := range pairs(v) {
		if p.name == "include" {
			continue
		}
		s, ok := stringOf(p.val)
		if !ok {
			d.wrongType(p.val, sevErr, "the context entry "+quote(p.name), "a path", "the runtime ignores it")
			continue
		}
		out = append(out, ContextRef{Key: p.name, Path: s, Direct: true, Range: d.rangeOf(p.val)})
	}
	return out
}

// keyPaths records the place of key k (at path) and of every key under it.
func (d *doc) keyPaths(b *Bundle, path string, k, v *yaml.Node, depth int) {
	if b.Keys == nil {
		b.Keys = map[string]diag.Range{}
	}
	if len(b.Keys) > MaxDiagnostics*10 || depth > MaxDepth {
		return
	}
	b.Keys[path] = d.rangeOf(k)
	for _, p := range pairs(v) {
		d.keyPaths(b, path+"."+p.name, p.key, p.val, depth+1)
	}
}
