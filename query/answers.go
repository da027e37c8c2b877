package query

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/resolve"
	"github.com/amplidex/amplidex/discovery/syntax"
)

// The answers of the methods that a View answers (see the table in
// methods.go). The daemon and the in-process catalog of the command line
// both run them, so both print the same.

func info(v *catalog.View, c *discovery.Collection) CollectionInfo {
	ci := Describe(c)
	ci.Status = status(v.Set, c)
	return ci
}

// status is what c is in s: skipped (unusable), active (it wins its
// name) or shadowed.
func status(s *resolve.Set, c *discovery.Collection) string {
	switch {
	case !c.Valid:
		return "skipped"
	case s.Lookup(c.Name) == c:
		return "active"
	}
	return "shadowed"
}

// Describe returns what CollectionInfo says of c on its own: everything
// but Status, which depends on the other collections of a view.
func Describe(c *discovery.Collection) CollectionInfo {
	ci := CollectionInfo{
		Name: c.Name, Version: c.Version, Description: c.Description,
		Root: c.Root.Kind, RootPath: c.Root.Path, Dir: c.Dir, RealDir: c.RealDir, Base: c.Base,
		Layout: c.Layout, Valid: c.Valid, Problem: c.Problem,
		Counts: Counts{
			Profiles: c.Count(discovery.KindProfile), Agents: c.Count(discovery.KindAgent),
			Context: c.Count(discovery.KindContext), ScenarioTools: c.Count(discovery.KindTool),
			Modules: c.Count(discovery.KindModule),
		},
	}
	if c.Metadata != nil {
		ci.Requires = c.Metadata.Requires
	}
	return ci
}

func infos(v *catalog.View, cs []*discovery.Collection) []CollectionInfo {
	out := make([]CollectionInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, info(v, c))
	}
	return out
}

func collections(v *catalog.View) []CollectionInfo { return infos(v, v.Set.Collections()) }

func resolveView(v *catalog.View, name string) *ResolveResult {
	return resolveIn(v.Set, name, Describe)
}

// ResolveSet answers resolve for name in s, each collection described by
// Describe: the answer a View of s gives.
func ResolveSet(s *resolve.Set, name string) *ResolveResult { return resolveIn(s, name, Describe) }

// resolveIn answers resolve for name in s, describing each collection with
// describe: whatever the Set was built from, resolve.Set.Resolve alone
// rules who wins.
func resolveIn(s *resolve.Set, name string, describe func(*discovery.Collection) CollectionInfo) *ResolveResult {
	in := func(c *discovery.Collection) CollectionInfo {
		ci := describe(c)
		ci.Status = status(s, c)
		return ci
	}
	all := func(cs []*discovery.Collection) []CollectionInfo {
		out := make([]CollectionInfo, 0, len(cs))
		for _, c := range cs {
			out = append(out, in(c))
		}
		return out
	}
	r := s.Resolve(name)
	res := &ResolveResult{Name: name, Found: r.Winner != nil, Shadowed: all(r.Shadowed), Skipped: all(r.Skipped)}
	if r.Winner != nil {
		w := in(r.Winner)
		res.Winner = &w
	} else if len(r.Skipped) == 0 && len(r.Shadowed) == 0 {
		res.DidYouMean = s.SuggestCollection(name)
	}
	// A name that resolves nowhere is an answer too (found is false), so
	// that scripts get the same object either way.
	return res
}

// ResolveDescribed answers resolve for name in s, describing each
// collection with describe (but for its Status, which s decides): for a
// Set whose collections stand for others, as those a daemon's summary
// describes (see catalog.Sketch).
func ResolveDescribed(s *resolve.Set, name string, describe func(*discovery.Collection) CollectionInfo) *ResolveResult {
	return resolveIn(s, name, describe)
}

func collection(v *catalog.View, name string) (*CollectionDetail, error) {
	r := v.Set.Resolve(name)
	c := r.Winner
	if c == nil {
		if len(r.Skipped) == 0 {
			return nil, notFound("collection %q resolves nowhere%s", name, didYouMean(v.Set.SuggestCollection(name)))
		}
		c = r.Skipped[0]
	}
	d := &CollectionDetail{CollectionInfo: info(v, c), Resources: []ResourceInfo{},
		Shadowed: infos(v, r.Shadowed), Skipped: infos(v, r.Skipped)}
	if md := c.Metadata; md != nil {
		d.Author, d.Capabilities, d.URLs = md.Author, md.Capabilities, md.URLs
	}
	for _, res := range c.Resources {
		d.Resources = append(d.Resources, resourceInfo(c, res))
	}
	return d, nil
}

func resourceInfo(c *discovery.Collection, r discovery.Resource) ResourceInfo {
	ri := ResourceInfo{Collection: c.Name, Kind: r.Kind, Name: r.Name, Ref: c.Name + ":" + r.Name,
		Path: r.Path, Rel: r.Rel, Root: c.Root.Kind}
	if f := c.Facts[r.Path]; f != nil {
		ri.Description = f.Description
	}
	return ri
}

// resources lists the resources of kind k of every winning collection.
func resources(v *catalog.View, k discovery.Kind) []ResourceInfo {
	out := []ResourceInfo{}
	for _, c := range v.Set.Winners() {
		for _, r := range c.Resources {
			if r.Kind == k {
				out = append(out, resourceInfo(c, r))
			}
		}
	}
	return out
}

// find resolves a "collection:name" or bare reference to a resource of
// kind k among the winning collections.
func find(v *catalog.View, k discovery.Kind, ref string) (*discovery.Collection, discovery.Resource, error) {
	if coll, name, ok := strings.Cut(ref, ":"); ok {
		c := v.Set.Lookup(coll)
		if c == nil {
			return nil, discovery.Resource{}, notFound("collection %q resolves nowhere%s", coll, didYouMean(v.Set.SuggestResource(k, ref)))
		}
		rel := name
		if !strings.Contains(name, "/") && !strings.HasSuffix(name, ".md") {
			rel = k.Dir() + "/" + name + ".md"
		}
		for _, r := range c.Resources {
			if r.Kind == k && (r.Rel == rel || r.Name == name) {
				return c, r, nil
			}
		}
		return nil, discovery.Resource{}, notFound("no %s %q in collection %s%s", k, name, coll, didYouMean(v.Set.SuggestResource(k, ref)))
	}
	var hits []ResourceInfo
	var hc *discovery.Collection
	var hr discovery.Resource
	for _, c := range v.Set.Winners() {
		if r, ok := c.Resource(k, ref); ok {
			hits = append(hits, resourceInfo(c, r))
			hc, hr = c, r
		}
	}
	switch len(hits) {
	case 0:
		return nil, discovery.Resource{}, notFound("no %s named %q in any collection%s", k, ref, didYouMean(v.Set.SuggestResource(k, ref)))
	case 1:
		return hc, hr, nil
	}
	refs := make([]string, len(hits))
	for i, h := range hits {
		refs[i] = h.Ref
	}
	return nil, discovery.Resource{}, invalidParams("%s %q is ambiguous: %s", k, ref, strings.Join(refs, ", "))
}

func profile(v *catalog.View, ref string, merged bool) (*ProfileResult, error) {
	c, r, err := find(v, discovery.KindProfile, ref)
	if err != nil {
		return nil, err
	}
	res := &ProfileResult{ResourceInfo: resourceInfo(c, r), Chain: []string{}}
	f := c.FullFacts(r.Path)
	if f != nil {
		res.Front = f.Front
		if f.Extends != nil {
			res.Extends = f.Extends.Value
		}
		if p, ok := f.Front.Value("profile").(*syntax.Map); ok {
			res.Version, _ = p.Value("version").(string)
		}
	}
	pr := resolve.ProfileRef{Collection: c, Path: r.Path}
	chain := v.Set.Chain(pr)
	for _, p := range chain {
		res.Chain = append(res.Chain, p.ID())
	}
	res.Problems = chainProblems(v, chain)
	res.Complete = len(res.Problems) == 0
	if merged {
		// An incomplete chain still merges what resolved, for a look;
		// Complete says it is not the effective profile.
		if m, _, err := v.Set.Effective(pr); err == nil {
			res.Merged = m
		}
	}
	return res, nil
}

// chainProblems returns why an extends chain does not reach its root:
// the extends diagnostics (unresolved, cycle, too deep) of its profiles,
// and the front matter problems of a profile in it that has no usable
// front matter. It is empty for a complete chain.
func chainProblems(v *catalog.View, chain []resolve.ProfileRef) []diag.Diagnostic {
	last := chain[len(chain)-1]
	incomplete := false
	if f := last.Collection.Facts[last.Path]; f != nil && f.Extends != nil {
		incomplete = true // the chain stops before a profile that extends none
	}
	for _, p := range chain {
		if f := p.Collection.Facts[p.Path]; f == nil || !f.HasFront() {
			incomplete = true
		}
	}
	if !incomplete {
		return nil
	}
	out := []diag.Diagnostic{}
	seen := map[*discovery.Collection][]diag.Diagnostic{}
	for _, p := range chain {
		ds, ok := seen[p.Collection]
		if !ok {
			ds = v.CollectionDiagnostics(p.Collection)
			seen[p.Collection] = ds
		}
		for _, d := range ds {
			if d.Path != p.Path {
				continue
			}
			switch {
			case d.Code == diag.CodeExtendsUnresolved, d.Code == diag.CodeExtendsCycle, d.Code == diag.CodeExtendsTooDeep,
				strings.HasPrefix(d.Code, "frontmatter/"):
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, diag.Diagnostic{Code: diag.CodeExtendsUnresolved, Severity: diag.SeverityError,
			Path: last.Path, Collection: last.Collection.Name,
			Message: fmt.Sprintf("the extends chain stops at %s", last.ID())})
	}
	return out
}

func agent(v *catalog.View, ref string) (*AgentResult, error) {
	c, r, err := find(v, discovery.KindAgent, ref)
	if err != nil {
		return nil, err
	}
	return &AgentResult{ResourceInfo: resourceInfo(c, r)}, nil
}

func search(v *catalog.View, text string) []ResourceInfo {
	out := []ResourceInfo{}
	q := strings.ToLower(strings.TrimSpace(text))
	if q == "" {
		return out
	}
	for _, c := range v.Set.Winners() {
		for _, r := range c.Resources {
			ri := resourceInfo(c, r)
			if strings.Contains(strings.ToLower(ri.Ref), q) || strings.Contains(strings.ToLower(ri.Rel), q) ||
				strings.Contains(strings.ToLower(ri.Description), q) {
				out = append(out, ri)
			}
		}
	}
	return out
}

// diagnostics answers with the View's own slice of diagnostics (or the
// one DiagnosticsUnder makes), not a copy: an answer that waits for a slow
// reader holds nothing of its own. The slice is shared: nothing that
// handles the answer may modify it.
func diagnostics(v *catalog.View, path string) *DiagnosticsResult {
	var all []diag.Diagnostic
	if path == "" {
		all = v.Diagnostics()
	} else {
		all = v.DiagnosticsUnder(filepath.Clean(path))
	}
	if all == nil {
		all = []diag.Diagnostic{}
	}
	return diagnosticsResult(all)
}

// withBundleDiagnostics adds to res what check reports in the bundle
// repository b stands in (none: res as it is), below p.Path when set.
// res's slice is shared (see diagnostics): the answer is a new one.
func withBundleDiagnostics(res *DiagnosticsResult, b *bundlecat.View, p DiagnosticsParams) *DiagnosticsResult {
	repo := b.Repo()
	if repo == "" {
		return res
	}
	var add []diag.Diagnostic
	if p.Path == "" {
		add, _ = b.Check(repo).Report()
	} else {
		add, _ = b.Check(repo).Report(filepath.Clean(p.Path))
	}
	if len(add) == 0 {
		return res
	}
	all := append(slices.Clone(res.Diagnostics), add...)
	diag.Sort(all)
	return diagnosticsResult(all)
}

// diagnosticsResult is the answer of all, counted.
func diagnosticsResult(all []diag.Diagnostic) *DiagnosticsResult {
	res := &DiagnosticsResult{Diagnostics: all}
	files := map[string]bool{}
	for _, d := range all {
		files[d.Path] = true
		switch d.Severity {
		case diag.SeverityError:
			res.Summary.Errors++
		case diag.SeverityWarning:
			res.Summary.Warnings++
		default:
			res.Summary.Infos++
		}
	}
	res.Summary.Files = len(files)
	return res
}

func deps(v *catalog.View, name string) (*DepsResult, error) {
	c := v.Set.Lookup(name)
	if c == nil {
		return nil, notFound("collection %q resolves nowhere%s", name, didYouMean(v.Set.SuggestCollection(name)))
	}
	res := &DepsResult{Name: c.Name, Version: c.Version, Requires: []DepStatus{}, RequiredBy: []DepUser{}}
	if c.Metadata != nil {
		for _, req := range c.Metadata.Requires {
			res.Requires = append(res.Requires, depStatus(v, req))
		}
	}
	for _, u := range v.Set.Winners() {
		if u.Metadata == nil {
			continue
		}
		for _, req := range u.Metadata.Requires {
			if req.Name == c.Name {
				st := depStatus(v, req)
				res.RequiredBy = append(res.RequiredBy, DepUser{Name: u.Name, Constraint: req.Constraint, Satisfied: st.Status == "ok"})
			}
		}
	}
	sort.Slice(res.RequiredBy, func(i, j int) bool { return res.RequiredBy[i].Name < res.RequiredBy[j].Name })
	return res, nil
}

func depStatus(v *catalog.View, req discovery.Requirement) DepStatus {
	st := DepStatus{Name: req.Name, Constraint: req.Constraint}
	con, err := syntax.ParseConstraint(req.Constraint)
	if err != nil {
		st.Status = "invalid"
		return st
	}
	dep := v.Set.Lookup(req.Name)
	if dep == nil {
		st.Status = "missing"
		return st
	}
	st.FoundVersion, st.FoundDir = dep.Version, dep.Dir
	if ok, err := con.Check(dep.Version); err == nil && ok {
		st.Status = "ok"
	} else {
		st.Status = "unsatisfied"
	}
	return st
}

// notFound and invalidParams build the protocol errors.
func notFound(format string, args ...any) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func invalidParams(format string, args ...any) error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// didYouMean is the end of a message that suggests near, or "" when
// there is nothing to suggest.
func didYouMean(near string) string {
	if near == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", near)
}
