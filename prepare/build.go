package prepare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// specs returns every module entry of m, its agents' included, in the order
// a reader meets them.
func (m *manifest) specs() []*moduleSpec {
	var out []*moduleSpec
	add := func(s *sessionSpec, lists ...[]moduleSpec) {
		if s != nil {
			for _, slot := range s.slots {
				out = append(out, s.modules[slot])
			}
		}
		for _, l := range lists {
			for i := range l {
				out = append(out, &l[i])
			}
		}
	}
	add(&m.session, m.providers, m.tools, m.hooks)
	for i := range m.agents {
		a := &m.agents[i]
		add(a.session, a.providers, a.tools, a.hooks)
	}
	return out
}

// fetchResult is the outcome of fetching one repository.
type fetchResult struct {
	f   fetched
	err error
}

// build fetches every module source of m, runs the install command, and
// assembles the plan for key k. When any source fails it returns a
// *BuildError naming every failed module.
func (c *Cache) build(ctx context.Context, m *manifest, k Key) (*Plan, error) {
	specs := m.specs()
	var repos []Source
	seen := make(map[string]bool)
	for _, s := range specs {
		if s.parsed.Kind == SourceGit && !seen[s.parsed.Repo()] {
			seen[s.parsed.Repo()] = true
			repos = append(repos, s.parsed)
		}
	}
	results := c.fetchAll(ctx, repos)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("prepare %s: %w", m.bundle.Manifest, err)
	}

	resolved := make(map[*moduleSpec]Module, len(specs))
	var failed []*ModuleError
	fail := func(s *moduleSpec, err error) {
		failed = append(failed, &ModuleError{Module: s.module, Section: s.section, Source: s.source, Manifest: s.file, Range: s.rng, Err: err})
	}
	for _, s := range specs {
		mod := Module{Module: s.module, Source: s.source, Config: s.config}
		switch s.parsed.Kind {
		case SourceGit:
			r := results[s.parsed.Repo()]
			if r.err != nil {
				fail(s, r.err)
				continue
			}
			dir, err := moduleDir(r.f.dir, s.parsed.Subdirectory)
			if err != nil {
				fail(s, err)
				continue
			}
			mod.Path, mod.Commit = dir, r.f.commit
		case SourceFile, SourceLocal:
			dir := s.parsed.Path
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(filepath.Dir(s.file), dir)
			}
			dir = filepath.Clean(dir)
			if _, err := os.Stat(dir); err != nil {
				fail(s, err)
				continue
			}
			mod.Path = dir
		}
		resolved[s] = mod
	}
	if len(failed) == 0 && len(c.installCmd) > 0 {
		done := make(map[string]bool)
		for _, s := range specs {
			mod := resolved[s]
			if mod.Path == "" || done[mod.Path] {
				continue
			}
			done[mod.Path] = true
			c.log.Info("installing module", "module", mod.Module, "path", mod.Path)
			if err := c.install(ctx, mod.Module, mod.Path); err != nil {
				fail(s, err)
			}
		}
	}
	if len(failed) > 0 {
		return nil, &BuildError{Manifest: m.bundle.Manifest, Modules: failed}
	}
	return m.plan(k, resolved, c.now().UTC()), nil
}

// fetchAll fetches repos, at most c.jobs at a time, and returns the results
// by Source.Repo. It returns once every fetch has ended.
func (c *Cache) fetchAll(ctx context.Context, repos []Source) map[string]fetchResult {
	results := make([]fetchResult, len(repos))
	sem := make(chan struct{}, c.jobs)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards done and the calls of c.fetched
		done int
	)
	report := func(repo string) {
		if c.fetched == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if repo != "" {
			done++
		}
		c.fetched(done, len(repos), repo)
	}
	if len(repos) > 0 {
		report("")
	}
	for i, src := range repos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i].err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			start := c.now()
			results[i].f, results[i].err = c.fetchGit(ctx, src)
			report(src.Repo())
			if results[i].err == nil {
				c.log.Info("module repository ready", "repo", src.Repo(), "commit", results[i].f.commit, "took", c.now().Sub(start))
			}
		}()
	}
	wg.Wait()
	out := make(map[string]fetchResult, len(repos))
	for i, src := range repos {
		out[src.Repo()] = results[i]
	}
	return out
}

// plan assembles the artifact from m and its resolved modules.
func (m *manifest) plan(k Key, resolved map[*moduleSpec]Module, created time.Time) *Plan {
	list := func(specs []moduleSpec) []Module {
		out := make([]Module, 0, len(specs))
		for i := range specs {
			out = append(out, resolved[&specs[i]])
		}
		return out
	}
	session := func(s *sessionSpec) Session {
		out := Session{Settings: s.settings}
		if len(s.slots) > 0 {
			out.Modules = make(map[string]Module, len(s.slots))
			for _, slot := range s.slots {
				out.Modules[slot] = resolved[s.modules[slot]]
			}
		}
		return out
	}
	p := &Plan{
		Format:          PlanFormat,
		Key:             k,
		Bundle:          m.bundle,
		DefaultProvider: m.defaultProvider,
		Session:         session(&m.session),
		Providers:       list(m.providers),
		Tools:           list(m.tools),
		Hooks:           list(m.hooks),
		Agents:          make([]Agent, 0, len(m.agents)),
		Mentions:        m.mentions,
		Created:         created,
	}
	if p.Mentions == nil {
		p.Mentions = []Mention{}
	}
	for i := range m.agents {
		a := &m.agents[i]
		pa := Agent{Name: a.name, Path: a.path, Description: a.description, ModelRole: a.modelRole,
			Providers: list(a.providers), Tools: list(a.tools), Hooks: list(a.hooks)}
		if a.session != nil {
			s := session(a.session)
			pa.Session = &s
		}
		p.Agents = append(p.Agents, pa)
	}
	return p
}

// repoList returns the distinct repositories of specs, sorted.
func repoList(specs []*moduleSpec) []string {
	seen := make(map[string]bool)
	var out []string
	for _, s := range specs {
		if s.parsed.Kind == SourceGit && !seen[s.parsed.Repo()] {
			seen[s.parsed.Repo()] = true
			out = append(out, s.parsed.Repo())
		}
	}
	sort.Strings(out)
	return out
}
