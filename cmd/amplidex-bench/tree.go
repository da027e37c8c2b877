package main

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Defect rates: the share of ordinary collections that carry each defect.
// A collection carries at most one.
const (
	rateBadYAML        = 0.02
	rateMissingProject = 0.015
	rateUnknownKey     = 0.02
	rateBrokenExtends  = 0.02
	rateNested         = 0.15
)

// treeStats describes a generated tree.
type treeStats struct {
	// Root is the user collection root the collections are in.
	Root string `json:"root"`
	// Collections is the number of collection directories in Root.
	Collections int `json:"collections"`
	// Files and Dirs count every file and directory below Root.
	Files int `json:"files"`
	Dirs  int `json:"dirs"`
	// Nested counts the collections in the pip-installed (nested) layout.
	Nested int `json:"nested"`
	// The defects planted, by kind.
	BadYAML        int `json:"bad_yaml"`
	MissingProject int `json:"missing_pyproject"`
	UnknownKey     int `json:"unknown_key"`
	BrokenExtends  int `json:"broken_extends"`
	// Probes are defect-free collections whose first agent the latency
	// loops rewrite, spread over the whole tree.
	Probes []probe `json:"-"`
}

// probe is one collection the latency loops edit.
type probe struct {
	Name  string // the collection's metadata name
	Dir   string // the collection directory
	Agent string // absolute path of the agent file that is rewritten
	Rel   string // Agent relative to the root
	Stem  string // the agent's name
}

// agentContent is the text of a probe agent carrying an unknown key named
// key, which the indexer must report.
func (p probe) agentContent(key string) []byte {
	return fmt.Appendf(nil, "---\nname: %s\ndescription: Agent %s of %s, rewritten by the benchmark\n%s: true\n---\n\nThis agent is rewritten by the benchmark to measure how soon a save shows.\n",
		p.Stem, p.Stem, p.Name, key)
}

// words feed names, descriptions and bodies.
var words = []string{
	"atlas", "beacon", "cedar", "delta", "ember", "falcon", "garnet", "harbor",
	"iris", "juniper", "kestrel", "lantern", "meadow", "nimbus", "orchid",
	"prism", "quartz", "raven", "summit", "tundra", "umber", "vertex",
	"willow", "xenon", "yarrow", "zephyr", "anchor", "bramble", "cobalt",
	"drift", "fable", "glacier",
}

var topics = []string{
	"architecture", "testing", "review", "planning", "research", "writing",
	"debugging", "design", "security", "release", "onboarding", "analysis",
}

// foundations are the collections every other one extends from, modelled
// on the bundled foundation and its companions.
var foundations = []string{"foundation", "toolkit", "developer-expertise"}

// generator writes one synthetic tree.
type generator struct {
	rng   *rand.Rand
	root  string
	stats *treeStats
	out   chan<- job // to the writers
	// files, when positive, is about how many files the tree is to hold
	// (see pad); left and leftColls are what is still to be written
	// of it, in files and in collections.
	files, left, leftColls int
}

// generateTree writes n collection directories into root (created; it must
// not exist or be empty), deterministically from seed, and describes them.
// Each collection holds about twelve files.
func generateTree(root string, n int, seed uint64) (*treeStats, error) {
	return generateSized(root, n, 0, seed)
}

// generateProject writes a project into dir: n collection directories in
// dir/.amplifier/collections holding about files files in all, as
// generateSized does, and describes them.
func generateProject(dir string, n, files int, seed uint64) (*treeStats, error) {
	return generateSized(filepath.Join(dir, ".amplifier", "collections"), n, files, seed)
}

// generateSized is generateTree with about files files in all, unless
// files is zero: collections that the generator makes smaller than their
// share are padded with more agents and context (see pad). With files at
// zero the tree is generateTree's.
func generateSized(root string, n, files int, seed uint64) (*treeStats, error) {
	if n < 1 {
		return nil, fmt.Errorf("generate tree %s: need at least one collection, not %d", root, n)
	}
	if files < 0 {
		return nil, fmt.Errorf("generate tree %s: need a file count of at least zero, not %d", root, files)
	}
	if entries, err := os.ReadDir(root); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("generate tree %s: directory is not empty", root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("generate tree: %w", err)
	}
	jobs := make(chan job, 4*writers)
	done := make(chan error, 1)
	go func() { done <- writeAll(jobs) }()
	g := &generator{
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		root:  root,
		stats: &treeStats{Root: root, Collections: n},
		out:   jobs,
		files: files, left: files, leftColls: n,
	}
	for i := 0; i < n; i++ {
		if i < len(foundations) {
			g.foundation(foundations[i])
		} else {
			g.collection(i)
		}
	}
	close(jobs)
	if err := <-done; err != nil {
		return nil, fmt.Errorf("generate tree %s: %w", root, err)
	}
	if err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			return nil
		}
		if d.IsDir() {
			g.stats.Dirs++
		} else {
			g.stats.Files++
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("generate tree %s: count: %w", root, err)
	}
	return g.stats, nil
}

// job is one collection directory to write: file contents by path
// relative to dir.
type job struct {
	dir   string
	files map[string]string
}

// write creates the files of j. Directories come before their files
// because the paths are sorted.
func (j job) write() error {
	made := map[string]bool{}
	for _, rel := range slices.Sorted(maps.Keys(j.files)) {
		path := filepath.Join(j.dir, rel)
		if parent := filepath.Dir(path); !made[parent] {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return err
			}
			made[parent] = true
		}
		if err := os.WriteFile(path, []byte(j.files[rel]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeAll writes the jobs it receives with a few workers, returning the
// first error once in is closed and every worker is done.
func writeAll(in <-chan job) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				mu.Lock()
				failed := first != nil
				mu.Unlock()
				if failed {
					continue // drain
				}
				if err := j.write(); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// writers is how many goroutines write the tree.
const writers = 4

func (g *generator) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *generator) chance(p float64) bool { return g.rng.Float64() < p }

// sentence is a few generated words.
func (g *generator) sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.pick(words)
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// body is a Markdown body of a few paragraphs, with mentions.
func (g *generator) body(title string, mentions []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# %s\n\n", title)
	for _, m := range mentions {
		fmt.Fprintf(&b, "@%s\n", m)
	}
	for p := 1 + g.rng.IntN(3); p > 0; p-- {
		fmt.Fprintf(&b, "\n%s. %s. %s.\n", g.sentence(8), g.sentence(10), g.sentence(6))
	}
	b.WriteString("\n## Steps\n\n1. Read the context.\n2. Do the work.\n3. Report back.\n")
	return b.String()
}

func (g *generator) version() string {
	return fmt.Sprintf("%d.%d.%d", 1+g.rng.IntN(2), g.rng.IntN(10), g.rng.IntN(20))
}

// pyproject is the text of a collection's pyproject.toml.
func (g *generator) pyproject(name, version string, requires map[string]string) string {
	var b strings.Builder
	b.WriteString("[build-system]\nrequires = [\"setuptools>=61.0\"]\nbuild-backend = \"setuptools.build_meta\"\n\n")
	fmt.Fprintf(&b, "[project]\nname = %q\nversion = %q\ndescription = %q\nrequires-python = \">=3.11\"\nlicense = { text = \"MIT\" }\n\n",
		name, version, g.sentence(6)+" collection")
	if g.chance(0.6) {
		fmt.Fprintf(&b, "[project.urls]\nrepository = \"https://example.com/%s/amplifier-collection-%s\"\n\n", g.pick(words), name)
	}
	fmt.Fprintf(&b, "[tool.amplifier.collection]\nauthor = %q\ncapabilities = [\n", strings.ToUpper(g.pick(words)[:1])+" "+g.pick(words))
	for k := 1 + g.rng.IntN(4); k > 0; k-- {
		fmt.Fprintf(&b, "    %q,\n", g.pick(topics)+"-"+g.pick(words))
	}
	b.WriteString("]\n")
	if len(requires) > 0 {
		b.WriteString("\n[tool.amplifier.collection.requires]\n")
		for _, f := range foundations {
			if c, ok := requires[f]; ok {
				fmt.Fprintf(&b, "%s = %q\n", f, c)
			}
		}
	}
	return b.String()
}

// profile is the text of a profile extending parent ("" for a root profile).
func (g *generator) profile(name, description, parent string, agents []string, extraKey string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nprofile:\n  name: %s\n  version: %s\n  description: %s\n", name, g.version(), description)
	if parent != "" {
		fmt.Fprintf(&b, "  extends: %s\n", parent)
	}
	if extraKey != "" {
		fmt.Fprintf(&b, "  %s: anthropic/claude-sonnet-4-5\n", extraKey)
	}
	if parent == "" || g.chance(0.5) {
		b.WriteString("\nsession:\n  orchestrator:\n    module: loop-streaming\n    source: git+https://github.com/microsoft/amplifier-module-loop-streaming@main\n")
		b.WriteString("    config:\n      extended_thinking: true\n  context:\n    module: context-simple\n")
	}
	if g.chance(0.6) {
		b.WriteString("\nproviders:\n  - module: provider-anthropic\n    source: git+https://github.com/microsoft/amplifier-module-provider-anthropic@main\n    config:\n      default_model: claude-sonnet-4-5\n")
	}
	if g.chance(0.7) {
		b.WriteString("\ntools:\n  - module: tool-filesystem\n    source: git+https://github.com/microsoft/amplifier-module-tool-filesystem@main\n  - module: tool-bash\n")
	}
	if g.chance(0.3) {
		b.WriteString("\nui:\n  show_thinking_stream: true\n  show_tool_lines: 5\n")
	}
	if len(agents) > 0 {
		b.WriteString("\nagents:\n")
		for _, a := range agents {
			fmt.Fprintf(&b, "  - %s\n", a)
		}
	}
	b.WriteString("---\n")
	return b.String()
}

// agent is the text of an agent; broken makes its front matter bad YAML.
func (g *generator) agent(name string, broken bool) string {
	var b strings.Builder
	b.WriteString("---\n")
	if g.chance(0.3) {
		fmt.Fprintf(&b, "meta:\n  name: %s\n  description: %s\n", name, g.sentence(9))
	} else {
		fmt.Fprintf(&b, "name: %s\ndescription: |\n  %s.\n  %s.\n", name, g.sentence(9), g.sentence(7))
	}
	if broken {
		fmt.Fprintf(&b, "keywords: [%s, %s\n  priority: : high\n", g.pick(topics), g.pick(topics))
	} else {
		if g.chance(0.5) {
			fmt.Fprintf(&b, "model: inherit\nkeywords: [%s, %s]\npriority: %d\n", g.pick(topics), g.pick(topics), g.rng.IntN(10))
		}
		if g.chance(0.4) {
			b.WriteString("tools:\n  - module: tool-filesystem\n  - module: tool-search\n")
		}
	}
	b.WriteString("---\n")
	return b.String()
}

// foundation writes one of the collections the others extend.
func (g *generator) foundation(name string) {
	dir := filepath.Join(g.root, name)
	files := map[string]string{
		"pyproject.toml": g.pyproject(name, "1.2.0", nil),
		"README.md":      "# " + name + "\n\n" + g.sentence(12) + ".\n",
	}
	switch name {
	case "foundation":
		files["profiles/foundation.md"] = g.profile("foundation", "The root of every profile", "", nil, "") + g.body("Foundation", nil)
		files["profiles/base.md"] = g.profile("base", "Base configuration", "foundation:profiles/foundation.md", nil, "") + g.body("Base", []string{"foundation:context/shared/common-agent-base.md"})
		files["profiles/general.md"] = g.profile("general", "General purpose", "foundation:base", []string{"zen-architect", "bug-hunter"}, "") + g.body("General", nil)
		for _, a := range []string{"zen-architect", "bug-hunter", "explorer"} {
			files["agents/"+a+".md"] = g.agent(a, false) + g.body(a, []string{"foundation:context/IMPLEMENTATION_PHILOSOPHY.md"})
		}
		files["context/IMPLEMENTATION_PHILOSOPHY.md"] = g.body("Implementation philosophy", nil)
		files["context/shared/common-agent-base.md"] = g.body("Common agent base", nil)
	case "toolkit":
		files["profiles/toolkit-dev.md"] = g.profile("toolkit-dev", "Toolkit development", "foundation:base", nil, "") + g.body("Toolkit", nil)
		files["agents/tool-builder.md"] = g.agent("tool-builder", false) + g.body("Tool builder", nil)
		files["scenario-tools/blog-writer/pyproject.toml"] = "[project]\nname = \"blog-writer\"\nversion = \"0.1.0\"\n"
	default:
		files["profiles/dev.md"] = g.profile("dev", "Developer expertise", "foundation:general", nil, "") + g.body("Dev", nil)
		files["agents/reviewer.md"] = g.agent("reviewer", false) + g.body("Reviewer", nil)
	}
	g.pad(files, "")
	g.out <- job{dir: dir, files: files}
}

// collection writes ordinary collection i.
func (g *generator) collection(i int) {
	name := fmt.Sprintf("%s-%s-%05d", g.pick(words), g.pick(topics), i)
	defect := ""
	switch r := g.rng.Float64(); {
	case r < rateBadYAML:
		defect = "bad-yaml"
		g.stats.BadYAML++
	case r < rateBadYAML+rateMissingProject:
		defect = "missing-pyproject"
		g.stats.MissingProject++
	case r < rateBadYAML+rateMissingProject+rateUnknownKey:
		defect = "unknown-key"
		g.stats.UnknownKey++
	case r < rateBadYAML+rateMissingProject+rateUnknownKey+rateBrokenExtends:
		defect = "broken-extends"
		g.stats.BrokenExtends++
	}
	nested := g.chance(rateNested)
	dirName := "amplifier-collection-" + name
	if nested {
		dirName = name
		g.stats.Nested++
	}
	dir := filepath.Join(g.root, dirName)
	base := dir // where the resources live
	files := map[string]string{}
	requires := map[string]string{}
	if g.chance(0.4) {
		requires["foundation"] = "^1.0.0"
	}
	if g.chance(0.1) {
		requires["toolkit"] = ">=1.0,<2.0"
	}
	py := g.pyproject(name, g.version(), requires)
	if defect != "missing-pyproject" {
		files["pyproject.toml"] = py
	}
	files["README.md"] = "# " + name + "\n\n" + g.sentence(14) + ".\n"
	if g.chance(0.7) {
		files["LICENSE"] = "MIT License\n\nCopyright (c) " + g.pick(words) + "\n"
	}
	pkg := ""
	if nested {
		pkg = strings.ReplaceAll(name, "-", "_") + "/"
		base = filepath.Join(dir, pkg)
		files[pkg+"__init__.py"] = ""
		if defect != "missing-pyproject" {
			files[pkg+"pyproject.toml"] = py
		}
	}

	// Context first, so that bodies can mention it.
	var contexts []string
	for k := 1 + g.rng.IntN(5); k > 0; k-- {
		var rel string
		switch g.rng.IntN(3) {
		case 0:
			rel = fmt.Sprintf("context/%s-%d.md", g.pick(topics), k)
		case 1:
			rel = fmt.Sprintf("context/%s/%s-%d.md", g.pick(topics), g.pick(words), k)
		default:
			rel = fmt.Sprintf("context/%s/%s/%s-%d.md", g.pick(topics), g.pick(topics), g.pick(words), k)
		}
		contexts = append(contexts, rel)
		files[pkg+rel] = g.body(g.sentence(3), nil)
	}

	var agents []string
	for k := 2 + g.rng.IntN(4); k > 0; k-- {
		agents = append(agents, fmt.Sprintf("%s-%s", g.pick(topics), g.pick([]string{"expert", "helper", "planner", "reviewer", "writer"}))+fmt.Sprint(k))
	}
	for k, a := range agents {
		var mentions []string
		if g.chance(0.5) {
			mentions = append(mentions, name+":"+contexts[0])
		}
		files[pkg+"agents/"+a+".md"] = g.agent(a, defect == "bad-yaml" && k == len(agents)-1) + g.body(a, mentions)
	}

	parents := []string{"foundation:base", "foundation:profiles/general.md", "toolkit:toolkit-dev", "developer-expertise:dev", "foundation:profiles/base.md"}
	nprof := 1 + g.rng.IntN(3)
	first := ""
	for k := 0; k < nprof; k++ {
		pname := fmt.Sprintf("%s-%s", name[:strings.IndexByte(name, '-')], g.pick([]string{"dev", "review", "plan", "write", "ops"}))
		if k > 0 {
			pname += fmt.Sprint(k)
		}
		parent := g.pick(parents)
		switch {
		case k == 1:
			parent = first
		case k == 2:
			parent = name + ":" + first
		}
		if defect == "broken-extends" && k == 0 {
			parent = "foundation:no-such-profile"
		}
		extra := ""
		if defect == "unknown-key" && k == nprof-1 {
			extra = "modle"
		}
		var refs []string
		if g.chance(0.4) {
			refs = agents[:1+g.rng.IntN(len(agents))]
		}
		if k == 0 {
			first = pname
		}
		files[pkg+"profiles/"+pname+".md"] = g.profile(pname, g.sentence(5), parent, refs, extra) +
			g.body(pname, []string{"foundation:context/shared/common-agent-base.md"})
	}

	if g.chance(0.15) {
		tool := g.pick(topics) + "-tool"
		files[pkg+"scenario-tools/"+tool+"/pyproject.toml"] = fmt.Sprintf("[project]\nname = %q\nversion = \"0.1.0\"\n", tool)
		files[pkg+"scenario-tools/"+tool+"/README.md"] = "# " + tool + "\n"
	}
	if g.chance(0.1) {
		files[pkg+"modules/tool-"+g.pick(words)+"/__init__.py"] = "\"\"\"A generated module.\"\"\"\n"
	}

	g.pad(files, pkg)
	g.out <- job{dir: dir, files: files}
	if defect == "" {
		agent := filepath.Join(base, "agents", agents[0]+".md")
		rel, _ := filepath.Rel(g.root, agent)
		g.stats.Probes = append(g.stats.Probes, probe{Name: name, Dir: dir, Agent: agent, Rel: rel, Stem: agents[0]})
	}
}

// pad adds agents and context documents (under pkg, the package
// directory of a nested collection) to the files of one collection until
// it holds its share of the files still to be written: that share is the
// files left over the collections left, times a random factor between ½
// and 1½, so that collections vary in size as the generator's own do; the
// last collection takes what is left. A collection is never made smaller.
// Without a file count, pad does nothing, and draws nothing from the
// random source.
func (g *generator) pad(files map[string]string, pkg string) {
	if g.files == 0 {
		return
	}
	want := g.left
	if g.leftColls > 1 {
		want = int(float64(g.left) / float64(g.leftColls) * (0.5 + g.rng.Float64()))
	}
	for k := 1; len(files) < want; k++ {
		if k%3 == 0 {
			a := fmt.Sprintf("%s-extra%d", g.pick(topics), k)
			files[pkg+"agents/"+a+".md"] = g.agent(a, false) + g.body(a, nil)
		} else {
			files[pkg+fmt.Sprintf("context/%s/%s-extra-%d.md", g.pick(topics), g.pick(words), k)] = g.body(g.sentence(3), nil)
		}
	}
	g.left = max(g.left-len(files), 0)
	g.leftColls--
}

// warmTree reads every directory and file below root, so that a timed
// start finds the tree in the page cache even on a machine that pages out
// idle cache within seconds.
func warmTree(root string) error {
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		return fmt.Errorf("warm tree %s: %w", root, err)
	}
	return nil
}
