package bundle

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/diag"
)

var (
	agentKeys     = keyset{"meta", "tools", "providers", "hooks", "session", "provider_preferences", "model_role", "agents"}
	agentFlatKeys = keyset{"name", "description"}
	agentMetaKeys = keyset{"name", "description", "model_role", "provider_preferences", "version"}
	// modelRoles are the roles the routing matrices define (AGENT_AUTHORING.md).
	modelRoles = keyset{"coding", "ui-coding", "security-audit", "reasoning", "critique", "creative", "writing", "research", "vision", "image-gen", "critical-ops", "fast", "general"}

	modeKeys        = keyset{"name", "description", "shortcut", "advertised", "default_action", "allowed_transitions", "allow_clear", "tools", "contributes"}
	modeToolKeys    = keyset{"safe", "warn", "confirm", "block"}
	contributesKeys = keyset{"agents", "context", "skills"}

	skillKeys = keyset{"name", "description", "license", "compatibility", "metadata", "allowed-tools", "version", "model_role", "model", "context", "agent", "disable-model-invocation", "user-invocable", "argument-hint", "hooks"}
	skillName = lazyRegexp(`^[a-z0-9]+(-[a-z0-9]+)*$`)

	recipeKeys     = keyset{"name", "description", "version", "author", "created", "updated", "tags", "context", "recursion", "rate_limiting", "steps", "stages", "final_output", "output", "validation", "metadata", "orchestrator"}
	stageKeys      = keyset{"name", "description", "steps", "approval", "approval_required", "approval_message", "auto_approve_if", "condition"}
	approvalKeys   = keyset{"required", "prompt", "timeout", "default"}
	recursionKeys  = keyset{"max_depth", "max_total_steps"}
	stepTypes      = keyset{"agent", "recipe", "bash"}
	stepKeys       = keyset{"id", "type", "agent", "mode", "prompt", "provider", "model", "model_role", "provider_preferences", "recipe", "context", "command", "cwd", "env", "output_exit_code", "condition", "foreach", "as", "collect", "max_iterations", "parallel", "while_condition", "max_while_iterations", "break_when", "update_context", "while_steps", "steps", "output", "parse_json", "agent_config", "timeout", "retry", "on_error", "depends_on", "spawn_mode"}
	semverPattern  = lazyRegexp(`^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)
	maxRecipeSteps = 10_000
)

// agent reads an agent file as the runtime's _load_agent_file_metadata
// does: meta: (or a flat name and description), and its own modules.
func (d *doc) agent(root *yaml.Node, m *Map, f *File) *Agent {
	a := &Agent{Data: m, Name: strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))}
	mk, mv := lookup(root, "meta")
	hasMeta := mk != nil && Truthy(m.Value("meta"))
	flat := !hasMeta && (m.Value("name") != nil || m.Value("description") != nil)
	known := agentKeys
	if flat || mk == nil {
		known = append(append(keyset{}, agentKeys...), agentFlatKeys...)
	}
	var nearDescription bool
	for _, p := range pairs(root) {
		if containsStr(known, p.name) {
			continue
		}
		if p.name == "includes" {
			d.diags.add(CodeUnknownKey, sevErr, d.rangeOf(p.key),
				"an agent file takes no includes: the runtime reads only meta:, tools:, providers:, hooks:, session: and agents: of it; include bundles from a bundle or behavior")
			continue
		}
		d.unknownKey(p, "an agent's front matter", known)
	}
	var metaNode *yaml.Node
	switch {
	case hasMeta && isMapping(mv):
		a.HasMeta, a.Meta, metaNode = true, m.Value("meta").(*Map), mv
		for _, p := range pairs(mv) {
			if !containsStr(agentMetaKeys, p.name) {
				d.unknownKey(p, "meta:", agentMetaKeys)
				if diag.Suggest(p.name, agentMetaKeys) == "description" {
					nearDescription = true
				}
			}
		}
	case hasMeta:
		d.wrongType(mv, sevErr, "meta:", "a mapping", "write meta: {name: …, description: …}")
	case flat:
		a.Meta, metaNode = m, root
		d.diags.add(CodeAgentNoMeta, sevWarn, d.lines.LineRange(d.base),
			"this agent has no meta: section; the runtime reads its top-level name and description instead: put them under meta:")
	case d.noFrontMatter:
	default:
		d.diags.add(CodeAgentNoMeta, sevErr, d.lines.LineRange(max(d.base-1, 0)),
			"this agent has no meta: section, so it has no description and the runtime never offers it: add meta: {name: %s, description: …}", a.Name)
	}
	if metaNode != nil {
		nk, nv := lookup(metaNode, "name")
		if s, ok := stringOf(nv); ok && s != "" {
			a.Name, a.NameRange = s, d.rangeOf(nv)
		} else if nk != nil {
			d.wrongType(nv, sevErr, "meta.name", "a name", "")
		}
		dk, dv := lookup(metaNode, "description")
		switch s, ok := stringOf(dv); {
		case ok && strings.TrimSpace(s) != "":
			a.Description = s
		case dk == nil && !nearDescription && a.HasMeta:
			d.diags.add(CodeMissingKey, sevErr, d.rangeOf(mk),
				"meta: has no description: the runtime offers the agent to the model by its description, so it is never chosen; add description:")
		case dk != nil:
			d.wrongType(dv, sevErr, "meta.description", "a non-empty string", "describe when to use the agent")
		}
		if rk, rv := lookup(metaNode, "model_role"); rk != nil {
			d.modelRole(rv)
		}
	}
	if rk, rv := lookup(root, "model_role"); rk != nil {
		d.modelRole(rv)
	}
	a.Tools = d.agentModules(root, m, "tools")
	a.Providers = d.agentModules(root, m, "providers")
	a.Hooks = d.agentModules(root, m, "hooks")
	if ak, av := lookup(root, "agents"); ak != nil {
		if s, ok := stringOf(av); ok && s != "all" && s != "none" {
			d.diags.add(CodeInvalidValue, sevErr, d.rangeOf(av),
				"agents: %s is not all, none, a list of agent names or a mapping; the runtime refuses the agent", quote(s))
		} else if !ok && !isSeq(av) && !isMapping(av) && !isNull(av) {
			d.wrongType(av, sevErr, "agents:", "all, none or a list of agent names", "the runtime refuses the agent")
		}
	}
	return a
}

// agentModules checks an agent's own module list.
func (d *doc) agentModules(root *yaml.Node, m *Map, sec string) []Module {
	k, v := lookup(root, sec)
	if k == nil || isNull(v) {
		return nil
	}
	if !isSeq(v) {
		d.wrongType(v, sevErr, sec+":", "a list", "write "+sec+": [- module: MODULE-ID]")
		return nil
	}
	vals, _ := m.Value(sec).([]any)
	var out []Module
	for i, it := range items(v) {
		if !isMapping(it) {
			d.wrongType(it, sevErr, sec+" entry", "a mapping", "write - module: MODULE-ID")
			continue
		}
		var entry *Map
		if i < len(vals) {
			entry, _ = vals[i].(*Map)
		}
		d.moduleEntry(it, sec)
		mod := Module{Entry: entry, Range: d.rangeOf(it)}
		if s, ok := entry.Value("module").(string); ok {
			mod.ID = s
		}
		out = append(out, mod)
	}
	return out
}

// modelRole checks a model_role: a role or a list of roles.
func (d *doc) modelRole(v *yaml.Node) {
	check := func(n *yaml.Node) {
		s, ok := stringOf(n)
		if !ok {
			d.wrongType(n, sevErr, "model_role", "a role name", "")
			return
		}
		if containsStr(modelRoles, s) {
			return
		}
		msg := "model_role " + quote(s) + " is not a role the routing matrices define, so the fallback chain skips it"
		if sug := diag.Suggest(s, modelRoles); sug != "" {
			msg += "; did you mean " + quote(sug) + "?"
		} else {
			msg += " (roles: " + strings.Join(modelRoles, ", ") + ")"
		}
		d.diags.add(CodeInvalidValue, sevWarn, d.rangeOf(n), "%s", msg)
	}
	if isSeq(v) {
		for _, it := range items(v) {
			check(it)
		}
		return
	}
	check(v)
}

// mode reads a mode file (mode: {...}) and what validate_modes checks.
func (d *doc) mode(root *yaml.Node, m *Map) *Mode {
	md := &Mode{Data: m}
	for _, p := range pairs(root) {
		if p.name != "mode" {
			d.unknownKey(p, "a mode's front matter", keyset{"mode"})
		}
	}
	mk, mv := lookup(root, "mode")
	if mk == nil || !isMapping(mv) {
		if mk != nil {
			d.wrongType(mv, sevErr, "mode:", "a mapping", "write mode: {name: …, description: …}")
		} else if !d.noFrontMatter {
			d.diags.add(CodeMissingKey, sevErr, d.lines.LineRange(max(d.base-1, 0)),
				"this mode has no mode: section; the runtime reads none of its settings: add mode: {name: …, description: …}")
		}
		return md
	}
	d.checkKeys(mv, "mode:", modeKeys)
	if nk, nv := lookup(mv, "name"); nk == nil {
		d.diags.add(CodeMissingKey, sevErr, d.rangeOf(mk), "mode: has no name; add name:")
	} else if s, ok := stringOf(nv); ok {
		md.Name, md.NameRange = s, d.rangeOf(nv)
	} else {
		d.wrongType(nv, sevErr, "mode.name", "a string", "")
	}
	if _, dv := lookup(mv, "description"); dv != nil {
		md.Description, _ = stringOf(dv)
	}
	if _, sv := lookup(mv, "shortcut"); sv != nil {
		md.Shortcut, _ = stringOf(sv)
	}
	if tk, tv := lookup(mv, "tools"); tk != nil {
		if !isMapping(tv) {
			d.wrongType(tv, sevErr, "mode.tools", "a mapping", "write tools: {safe: [...], warn: [...]}")
		} else {
			for _, p := range d.checkKeys(tv, "mode.tools", modeToolKeys) {
				if !isSeq(p.val) && !isNull(p.val) {
					d.wrongType(p.val, sevErr, "mode.tools."+p.name, "a list of tool names", "")
				}
			}
		}
	}
	if ak, av := lookup(mv, "default_action"); ak != nil {
		if s, _ := stringOf(av); s != "block" && s != "allow" {
			d.diags.add(CodeInvalidValue, sevErr, d.rangeOf(av), "default_action is block or allow")
		}
	}
	if ck, cv := lookup(mv, "contributes"); ck != nil && !isNull(cv) {
		if !isMapping(cv) {
			d.wrongType(cv, sevErr, "contributes", "a mapping", "")
		} else {
			for _, p := range d.checkKeys(cv, "contributes", contributesKeys) {
				switch p.name {
				case "agents":
					if !isMapping(p.val) {
						d.wrongType(p.val, sevErr, "contributes.agents", "a mapping of agent names to definitions", "")
					}
				case "context", "skills":
					if !isSeq(p.val) {
						d.wrongType(p.val, sevErr, "contributes."+p.name, "a list of strings", "")
					}
				}
			}
		}
	}
	return md
}

// skill reads a skill's front matter (the Agent Skills format).
func (d *doc) skill(root *yaml.Node, m *Map, f *File) *Skill {
	s := &Skill{Data: m}
	d.checkKeys(root, "a skill's front matter", skillKeys)
	dir := filepath.Base(filepath.Dir(f.Path))
	nk, nv := lookup(root, "name")
	switch name, ok := stringOf(nv); {
	case nk == nil:
		if root != nil && !d.nearMiss(root, "name", skillKeys) {
			d.diags.add(CodeMissingKey, sevErr, d.lines.LineRange(d.base), "a skill needs name:; add name: %s", dir)
		}
	case !ok:
		d.wrongType(nv, sevErr, "name", "a string", "")
	default:
		s.Name, s.NameRange = name, d.rangeOf(nv)
		if !skillName().MatchString(name) || len(name) > 64 {
			d.diags.add(CodeInvalidValue, sevErr, s.NameRange, "a skill's name is lowercase letters, digits and single hyphens, at most 64 characters")
		} else if name != dir {
			d.diags.add(CodeNameMismatch, sevWarn, s.NameRange, "the skill is named %s but its directory is %s", quote(name), quote(dir))
		}
	}
	dk, dv := lookup(root, "description")
	switch desc, ok := stringOf(dv); {
	case dk == nil:
		if root != nil && !d.nearMiss(root, "description", skillKeys) {
			d.diags.add(CodeMissingKey, sevErr, d.lines.LineRange(d.base), "a skill needs description: (what it does and when to load it)")
		}
	case !ok || strings.TrimSpace(desc) == "":
		d.wrongType(dv, sevErr, "description", "a non-empty string", "")
	default:
		s.Description = desc
		if len([]rune(desc)) > 1024 {
			d.diags.add(CodeInvalidValue, sevWarn, d.rangeOf(dv), "a skill's description is at most 1024 characters")
		}
	}
	return s
}

// recipe checks a recipe against the schema of amplifier-bundle-recipes.
func (d *doc) recipe(root *yaml.Node, m *Map) *Recipe {
	r := &Recipe{}
	if root == nil {
		return r
	}
	d.checkKeys(root, "a recipe", recipeKeys)
	for _, key := range []string{"name", "description", "version"} {
		k, v := lookup(root, key)
		if k == nil {
			if !d.nearMiss(root, key, recipeKeys) {
				d.diags.add(CodeMissingKey, sevErr, d.lines.LineRange(0), "a recipe needs %s:", key)
			}
			continue
		}
		s, ok := stringOf(v)
		skipped := d.masked && deref(v).Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
		switch {
		case !ok:
			d.wrongType(v, sevErr, key, "a string", "")
		case strings.TrimSpace(s) == "" && !skipped:
			d.diags.add(CodeInvalidValue, sevErr, d.rangeOf(v), "%s is empty", key)
		case key == "version" && !semverPattern().MatchString(s):
			d.diags.add(CodeInvalidValue, sevErr, d.rangeOf(v), "version %s is not semantic (MAJOR.MINOR.PATCH, such as 1.0.0)", quote(s))
		}
		switch key {
		case "name":
			r.Name = s
		case "version":
			r.Version = s
		}
	}
	if k, v := lookup(root, "recursion"); k != nil && isMapping(v) {
		d.checkKeys(v, "recursion", recursionKeys)
	}
	sk, sv := lookup(root, "steps")
	gk, gv := lookup(root, "stages")
	switch {
	case sk != nil && gk != nil:
		d.diags.add(CodeInvalidValue, sevErr, d.rangeOf(gk), "a recipe has steps: or stages:, not both")
	case sk == nil && gk == nil:
		if !d.nearMiss(root, "steps", recipeKeys) && !d.nearMiss(root, "stages", recipeKeys) {
			d.diags.add(CodeMissingKey, sevErr, d.lines.LineRange(0), "a recipe needs steps: (or stages:)")
		}
	}
	if sk != nil {
		d.steps(sv, r)
	}
	if gk != nil {
		if !isSeq(gv) {
			d.wrongType(gv, sevErr, "stages", "a list", "")
		}
		for _, st := range items(gv) {
			if !isMapping(st) {
				d.wrongType(st, sevErr, "a stage", "a mapping", "")
				continue
			}
			d.checkKeys(st, "a stage", stageKeys)
			if nk, _ := lookup(st, "name"); nk == nil {
				d.diags.add(CodeMissingKey, sevErr, d.rangeOf(st), "a stage needs name:")
			}
			if ak, av := lookup(st, "approval"); ak != nil && isMapping(av) {
				d.checkKeys(av, "approval", approvalKeys)
			}
			_, ss := lookup(st, "steps")
			d.steps(ss, r)
		}
	}
	d.stepRefs(root, r)
	return r
}

// nearMiss reports whether a key of n is a near miss of want (already
// reported as unknown, so the missing key is not reported twice).
func (d *doc) nearMiss(n *yaml.Node, want string, known keyset) bool {
	for _, p := range pairs(n) {
		if !containsStr(known, p.name) && diag.Suggest(p.name, known) == want {
			return true
		}
	}
	return false
}

// steps checks a list of steps and adds them to r.
func (d *doc) steps(v *yaml.Node, r *Recipe) {
	if v == nil {
		return
	}
	if !isSeq(v) {
		d.wrongType(v, sevErr, "steps", "a list", "")
		return
	}
	for _, it := range items(v) {
		if len(r.Steps) >= maxRecipeSteps {
			return
		}
		if !isMapping(it) {
			d.wrongType(it, sevErr, "a step", "a mapping", "")
			continue
		}
		d.checkKeys(it, "a step", stepKeys)
		st := Step{Type: "agent", Range: d.rangeOf(it)}
		ik, iv := lookup(it, "id")
		if ik == nil {
			d.diags.add(CodeMissingKey, sevErr, d.rangeOf(it), "a step needs id:")
		} else {
			st.ID, _ = stringOf(iv)
			st.Range = d.rangeOf(iv)
		}
		if _, tv := lookup(it, "type"); tv != nil {
			st.Type, _ = stringOf(tv)
			if !containsStr(stepTypes, st.Type) {
				d.diags.add(CodeInvalidValue, sevErr, d.rangeOf(tv), "a step's type is agent, recipe or bash")
			}
		}
		need := map[string][]string{"agent": {"agent", "prompt"}, "recipe": {"recipe"}, "bash": {"command"}}[st.Type]
		if k, _ := lookup(it, "steps"); k != nil {
			need = nil // a block of steps (foreach over a sub-list) runs no agent itself
		}
		for _, key := range need {
			if k, _ := lookup(it, key); k == nil && !d.nearMiss(it, key, stepKeys) {
				d.diags.add(CodeMissingKey, sevErr, st.Range, "%s step needs %s:", article(st.Type), key)
			}
		}
		if _, av := lookup(it, "agent"); av != nil {
			st.Agent, _ = stringOf(av)
		}
		for _, p := range pairs(it) {
			if p.name == "while_steps" || p.name == "steps" {
				d.steps(p.val, r)
			}
		}
		r.Steps = append(r.Steps, st)
	}
}

// stepRefs checks step ids are unique and depends_on names known steps.
func (d *doc) stepRefs(root *yaml.Node, r *Recipe) {
	seen := map[string]bool{}
	for _, st := range r.Steps {
		if st.ID == "" {
			continue
		}
		if seen[st.ID] {
			d.diags.add(CodeDuplicateStep, sevErr, st.Range, "the step id %s is used twice", quote(st.ID))
		}
		seen[st.ID] = true
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for _, it := range items(n) {
			_, dv := lookup(it, "depends_on")
			refs := items(dv)
			if s, ok := stringOf(dv); ok {
				refs, _ = []*yaml.Node{dv}, s
			}
			for _, ref := range refs {
				if s, ok := stringOf(ref); ok && !seen[s] {
					msg := "depends_on names " + quote(s) + ", which is not a step of this recipe"
					if sug := diag.Suggest(s, mapKeys(seen)); sug != "" {
						msg += "; did you mean " + quote(sug) + "?"
					}
					d.diags.add(CodeUnknownStep, sevErr, d.rangeOf(ref), "%s", msg)
				}
			}
			for _, p := range pairs(it) {
				if p.name == "while_steps" || p.name == "steps" {
					walk(p.val)
				}
			}
		}
	}
	_, sv := lookup(root, "steps")
	walk(sv)
	_, gv := lookup(root, "stages")
	for _, st := range items(gv) {
		_, ss := lookup(st, "steps")
		walk(ss)
	}
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// article puts "a" or "an" before a word.
func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
