package query

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amplidex/amplidex/discovery"
)

// Snapshot is one consistent view of every root: the resolved set and every
// diagnostic. The daemon swaps in a new Snapshot after each batch; the CLI
// builds one in process when no daemon runs. A Snapshot is immutable, so
// queries read it without locks.
type Snapshot struct {
	Set         *discovery.Set
	Diagnostics []discovery.Diagnostic
}

// NewSnapshot gathers the diagnostics of set: each collection's own, the
// cross-references, and extra (lock files, for instance), sorted.
func NewSnapshot(set *discovery.Set, extra []discovery.Diagnostic) *Snapshot {
	return NewSnapshotFrom(set, set.Check(), extra)
}

// NewSnapshotFrom is NewSnapshot with the cross-reference diagnostics
// computed by the caller (incrementally, with a discovery.Checker).
func NewSnapshotFrom(set *discovery.Set, cross, extra []discovery.Diagnostic) *Snapshot {
	n := len(cross) + len(extra)
	for _, c := range set.Collections() {
		n += len(c.Diagnostics)
	}
	ds := make([]discovery.Diagnostic, 0, n)
	for _, c := range set.Collections() {
		ds = append(ds, c.Diagnostics...)
	}
	ds = append(ds, cross...)
	ds = append(ds, extra...)
	discovery.SortDiagnostics(ds)
	return &Snapshot{Set: set, Diagnostics: ds}
}

// Params of the query methods.
type (
	// NameParams names a collection.
	NameParams struct {
		Name string `json:"name"`
	}
	// RefParams names a profile or agent: "collection:name", or a bare name
	// that only one collection has.
	RefParams struct {
		Ref    string `json:"ref"`
		Merged bool   `json:"merged,omitempty"`
	}
	// TextParams carries search text.
	TextParams struct {
		Text string `json:"text"`
	}
	// PathParams narrows diagnostics to a file or directory.
	PathParams struct {
		Path string `json:"path,omitempty"`
	}
)

// Methods lists the query methods a Snapshot answers.
var Methods = []string{"collections", "resolve", "collection", "profiles", "profile", "agents", "agent",
	"context", "tools", "modules", "search", "diagnostics", "deps"}

// Answer runs one query method against the snapshot.
func (s *Snapshot) Answer(method string, params json.RawMessage) (any, error) {
	decode := func(v any) error {
		if len(params) == 0 || string(params) == "null" {
			return nil
		}
		if err := json.Unmarshal(params, v); err != nil {
			return invalidParams("%s: %v", method, err)
		}
		return nil
	}
	switch method {
	case "collections":
		return s.collections(), nil
	case "resolve", "collection", "deps":
		var p NameParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, invalidParams("%s: a collection name is required", method)
		}
		switch method {
		case "resolve":
			return s.resolve(p.Name)
		case "collection":
			return s.collection(p.Name)
		default:
			return s.deps(p.Name)
		}
	case "profiles":
		return s.resources(discovery.KindProfile), nil
	case "agents":
		return s.resources(discovery.KindAgent), nil
	case "context":
		return s.resources(discovery.KindContext), nil
	case "tools":
		return s.resources(discovery.KindTool), nil
	case "modules":
		return s.resources(discovery.KindModule), nil
	case "profile", "agent":
		var p RefParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		if p.Ref == "" {
			return nil, invalidParams("%s: a reference such as collection:name is required", method)
		}
		if method == "profile" {
			return s.profile(p.Ref, p.Merged)
		}
		return s.agent(p.Ref)
	case "search":
		var p TextParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return s.search(p.Text), nil
	case "diagnostics":
		var p PathParams
		if err := decode(&p); err != nil {
			return nil, err
		}
		return s.diagnostics(p.Path), nil
	}
	return nil, unknownMethod(method)
}

func (s *Snapshot) info(c *discovery.Collection) CollectionInfo {
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
	switch w := s.Set.Lookup(c.Name); {
	case !c.Valid:
		ci.Status = "skipped"
	case w == c:
		ci.Status = "active"
	default:
		ci.Status = "shadowed"
	}
	if c.Metadata != nil {
		ci.Requires = c.Metadata.Requires
	}
	return ci
}

func (s *Snapshot) infos(cs []*discovery.Collection) []CollectionInfo {
	out := make([]CollectionInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, s.info(c))
	}
	return out
}

func (s *Snapshot) collections() []CollectionInfo { return s.infos(s.Set.Collections()) }

func (s *Snapshot) resolve(name string) (*ResolveResult, error) {
	r := s.Set.Resolve(name)
	res := &ResolveResult{Name: name, Found: r.Winner != nil, Shadowed: s.infos(r.Shadowed), Skipped: s.infos(r.Skipped)}
	if r.Winner != nil {
		w := s.info(r.Winner)
		res.Winner = &w
	}
	if r.Winner == nil && len(r.Skipped) == 0 {
		return res, notFound("collection %q resolves nowhere", name)
	}
	return res, nil
}

func (s *Snapshot) collection(name string) (*CollectionDetail, error) {
	r := s.Set.Resolve(name)
	c := r.Winner
	if c == nil {
		if len(r.Skipped) == 0 {
			return nil, notFound("collection %q resolves nowhere", name)
		}
		c = r.Skipped[0]
	}
	d := &CollectionDetail{CollectionInfo: s.info(c), Resources: []ResourceInfo{},
		Shadowed: s.infos(r.Shadowed), Skipped: s.infos(r.Skipped)}
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
func (s *Snapshot) resources(k discovery.Kind) []ResourceInfo {
	out := []ResourceInfo{}
	for _, c := range s.Set.Winners() {
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
func (s *Snapshot) find(k discovery.Kind, ref string) (*discovery.Collection, discovery.Resource, error) {
	if coll, name, ok := strings.Cut(ref, ":"); ok {
		c := s.Set.Lookup(coll)
		if c == nil {
			return nil, discovery.Resource{}, notFound("collection %q resolves nowhere", coll)
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
		return nil, discovery.Resource{}, notFound("no %s %q in collection %s", k, name, coll)
	}
	var hits []ResourceInfo
	var hc *discovery.Collection
	var hr discovery.Resource
	for _, c := range s.Set.Winners() {
		if r, ok := c.Resource(k, ref); ok {
			hits = append(hits, resourceInfo(c, r))
			hc, hr = c, r
		}
	}
	switch len(hits) {
	case 0:
		return nil, discovery.Resource{}, notFound("no %s named %q in any collection", k, ref)
	case 1:
		return hc, hr, nil
	}
	refs := make([]string, len(hits))
	for i, h := range hits {
		refs[i] = h.Ref
	}
	return nil, discovery.Resource{}, invalidParams("%s %q is ambiguous: %s", k, ref, strings.Join(refs, ", "))
}

func (s *Snapshot) profile(ref string, merged bool) (*ProfileResult, error) {
	c, r, err := s.find(discovery.KindProfile, ref)
	if err != nil {
		return nil, err
	}
	res := &ProfileResult{ResourceInfo: resourceInfo(c, r), Chain: []string{}}
	f := c.Facts[r.Path]
	if f != nil {
		res.Front = f.Front
		if f.Extends != nil {
			res.Extends = f.Extends.Value
		}
		if p, ok := f.Front["profile"].(map[string]any); ok {
			res.Version, _ = p["version"].(string)
		}
	}
	pr := discovery.ProfileRef{Collection: c, Path: r.Path}
	for _, p := range s.Set.Chain(pr) {
		res.Chain = append(res.Chain, p.ID())
	}
	if merged {
		m, _, err := s.Set.Effective(pr)
		if err != nil {
			return nil, notFound("%v", err)
		}
		res.Merged = m
	}
	return res, nil
}

func (s *Snapshot) agent(ref string) (*AgentResult, error) {
	c, r, err := s.find(discovery.KindAgent, ref)
	if err != nil {
		return nil, err
	}
	return &AgentResult{ResourceInfo: resourceInfo(c, r)}, nil
}

func (s *Snapshot) search(text string) []ResourceInfo {
	out := []ResourceInfo{}
	q := strings.ToLower(strings.TrimSpace(text))
	if q == "" {
		return out
	}
	for _, c := range s.Set.Winners() {
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

func (s *Snapshot) diagnostics(path string) *DiagnosticsResult {
	res := &DiagnosticsResult{Diagnostics: []discovery.Diagnostic{}}
	if path != "" {
		path = filepath.Clean(path)
	}
	files := map[string]bool{}
	for _, d := range s.Diagnostics {
		if path != "" && d.Path != path && !strings.HasPrefix(d.Path, path+string(filepath.Separator)) {
			continue
		}
		res.Diagnostics = append(res.Diagnostics, d)
		files[d.Path] = true
		switch d.Severity {
		case discovery.SeverityError:
			res.Summary.Errors++
		case discovery.SeverityWarning:
			res.Summary.Warnings++
		default:
			res.Summary.Infos++
		}
	}
	res.Summary.Files = len(files)
	return res
}

func (s *Snapshot) deps(name string) (*DepsResult, error) {
	c := s.Set.Lookup(name)
	if c == nil {
		return nil, notFound("collection %q resolves nowhere", name)
	}
	res := &DepsResult{Name: c.Name, Version: c.Version, Requires: []DepStatus{}, RequiredBy: []DepUser{}}
	if c.Metadata != nil {
		for _, req := range c.Metadata.Requires {
			res.Requires = append(res.Requires, s.depStatus(req))
		}
	}
	for _, u := range s.Set.Winners() {
		if u.Metadata == nil {
			continue
		}
		for _, req := range u.Metadata.Requires {
			if req.Name == c.Name {
				st := s.depStatus(req)
				res.RequiredBy = append(res.RequiredBy, DepUser{Name: u.Name, Constraint: req.Constraint, Satisfied: st.Status == "ok"})
			}
		}
	}
	sort.Slice(res.RequiredBy, func(i, j int) bool { return res.RequiredBy[i].Name < res.RequiredBy[j].Name })
	return res, nil
}

func (s *Snapshot) depStatus(req discovery.Requirement) DepStatus {
	st := DepStatus{Name: req.Name, Constraint: req.Constraint}
	con, err := discovery.ParseConstraint(req.Constraint)
	if err != nil {
		st.Status = "invalid"
		return st
	}
	dep := s.Set.Lookup(req.Name)
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

// notFound, invalidParams and unknownMethod build the protocol errors.
func notFound(format string, args ...any) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func invalidParams(format string, args ...any) error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func unknownMethod(method string) error {
	return &Error{Code: CodeUnknownMethod, Message: fmt.Sprintf("unknown method %q", method)}
}
