package query

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/amplidex/amplidex/discovery/bundle"
	bundlecat "github.com/amplidex/amplidex/discovery/bundle/catalog"
	"github.com/amplidex/amplidex/discovery/bundle/compose"
	"github.com/amplidex/amplidex/discovery/diag"
)

// BundleScope is where a client looks for bundles (compose.Env): the
// directory it stands in (the repository around it, and the runtime's
// ./ includes), its $AMPLIFIER_HOME (bundles/, settings.yaml,
// registry.json, cache/), its home directory and its project (whose
// .amplifier/ holds bundles/ and settings files; WorkDir when empty).
// Every path is absolute and clean.
type BundleScope struct {
	WorkDir       string `json:"work_dir"`
	AmplifierHome string `json:"amplifier_home,omitempty"`
	Home          string `json:"home,omitempty"`
	ProjectDir    string `json:"project_dir,omitempty"`
}

// Env returns the scope as package compose takes it.
func (s BundleScope) Env() compose.Env {
	return compose.Env{WorkDir: s.WorkDir, AmplifierHome: s.AmplifierHome, Home: s.Home, ProjectDir: s.ProjectDir}
}

// BundleInfo describes one bundle found, as `query bundles` lists it.
type BundleInfo struct {
	// Name and Version are the bundle's bundle.name and bundle.version
	// ("" when its file is not on this machine).
	Name    string `json:"name"`
	Version string `json:"version"`
	// Namespace is the namespace it shares: its repository's root
	// bundle's name.
	Namespace string `json:"namespace"`
	// Path is its file; "" for a registered name whose URI is not on this
	// machine (a git URL not in the runtime's cache).
	Path string `json:"path"`
	// URI is what a registered name loads.
	URI string `json:"uri,omitempty"`
	// Where says where it was found: repository, project, user,
	// well-known, or the registry or settings file that names it.
	Where string `json:"where"`
	// Key is the name it is found by there (a file or directory name, a
	// registered name).
	Key string `json:"key,omitempty"`
}

// BundleResult is what `query bundle REF` prints: the bundle file REF
// names and, without --composed, what it declares; with --composed, its
// composition with its includes as the runtime mounts it.
type BundleResult struct {
	Ref         string `json:"ref"`
	Path        string `json:"path"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	Namespace   string `json:"namespace"`
	// Declares is what the file itself declares (without --composed).
	Declares *BundleDeclares `json:"declares,omitempty"`
	// With --composed, the composition (see compose.Composition): the
	// mount plan in the shape of the runtime's to_mount_plan(), where
	// each part comes from (file and line), the include tree, the agents
	// and context files with where each resolves, the namespaces, the
	// file whose body is the instruction, and size estimates.
	MountPlan   *compose.MountPlan    `json:"mount_plan,omitempty"`
	Origins     *compose.Origins      `json:"origins,omitempty"`
	Includes    *compose.IncludeNode  `json:"includes,omitempty"`
	Agents      []compose.AgentRef    `json:"agents,omitempty"`
	Context     []compose.ContextFile `json:"context,omitempty"`
	Namespaces  []compose.Namespace   `json:"namespaces,omitempty"`
	Instruction string                `json:"instruction,omitempty"`
	Sizes       *compose.Sizes        `json:"sizes,omitempty"`
	// Refused says why the runtime's load of this bundle raises, where
	// amplidex composes what it can.
	Refused string `json:"refused,omitempty"`
	// Diagnostics are the file's own (syntax, schema, the mistakes the
	// runtime loads without a word) and, with --composed, those of its
	// composition (includes that do not resolve, cycles, …).
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
}

// BundleDeclares is what one bundle file declares, before composition.
type BundleDeclares struct {
	Includes  []DeclaredInclude `json:"includes"`
	Providers []string          `json:"providers,omitempty"` // module ids
	Tools     []string          `json:"tools,omitempty"`
	Hooks     []string          `json:"hooks,omitempty"`
	Agents    []string          `json:"agents,omitempty"`
	Context   []string          `json:"context,omitempty"`
	// Instruction is the size of its Markdown body.
	Instruction compose.Size `json:"instruction"`
}

// DeclaredInclude is one entry of a bundle's includes.
type DeclaredInclude struct {
	Source string `json:"source"`
	Line   int    `json:"line"` // 1-based
}

// bundleInfos answers "bundles".
func bundleInfos(v *bundlecat.View) []BundleInfo {
	out := []BundleInfo{}
	for _, f := range v.Bundles() {
		out = append(out, BundleInfo{Name: f.Name, Version: f.Version, Namespace: f.Namespace, Path: f.Path,
			URI: f.URI, Where: f.Where, Key: f.Key})
	}
	return out
}

// bundleAnswer answers "bundle".
func bundleAnswer(v *bundlecat.View, p BundleParams) (*BundleResult, error) {
	if p.Ref == "" {
		return nil, invalidParams("bundle: name a bundle (a name, ns:path or a file)")
	}
	path, err := v.Resolve(p.Ref)
	if errors.Is(err, compose.ErrNotFound) {
		return nil, notFound("%s", err.Error())
	}
	if err != nil {
		return nil, err
	}
	// A file named by its path may be another document of a repository:
	// what it is decides, as check decides it (anything else the
	// runtime would load as a bundle when asked to).
	if g, err := v.Files().Parse(path, bundle.KindOther); err == nil && g.Kind != bundle.KindOther && g.Kind != bundle.KindBundle {
		return nil, invalidParams("%s is not a bundle but %s file", path, kindName(g.Kind))
	}
	f, err := v.Parse(path)
	if err != nil {
		return nil, notFound("bundle %s: %s", path, err.Error())
	}
	if f.Bundle == nil {
		return nil, invalidParams("%s is not a bundle the runtime can read: %s", path, f.Refused)
	}
	b := f.Bundle
	res := &BundleResult{Ref: p.Ref, Path: path, Name: b.Name, Version: b.Version, Description: b.Description,
		Namespace: compose.NamespaceOf(v.Files(), path, b.Name), Diagnostics: append([]diag.Diagnostic{}, f.Diagnostics...)}
	if !p.Composed {
		res.Declares = declares(f)
		return res, nil
	}
	c := v.Compose(path)
	res.MountPlan, res.Origins, res.Includes = &c.MountPlan, &c.Origins, &c.Includes
	res.Agents, res.Context, res.Namespaces, res.Instruction = c.Agents, c.Context, c.Namespaces, c.Instruction
	res.Sizes, res.Refused = &c.Sizes, c.Refused
	res.Diagnostics = append(res.Diagnostics, c.Diagnostics...)
	diag.Sort(res.Diagnostics)
	return res, nil
}

// kindName is "an agent", "a mode", … for messages.
func kindName(k bundle.Kind) string {
	s := fmt.Sprint(k)
	if strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

func declares(f *bundle.File) *BundleDeclares {
	b := f.Bundle
	d := &BundleDeclares{Includes: []DeclaredInclude{}}
	for _, in := range b.Includes {
		d.Includes = append(d.Includes, DeclaredInclude{Source: in.Source, Line: in.Range.Start.Line + 1})
	}
	ids := func(ms []bundle.Module) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	d.Providers, d.Tools, d.Hooks = ids(b.Providers), ids(b.Tools), ids(b.Hooks)
	for _, a := range b.Agents {
		d.Agents = append(d.Agents, a.Name)
	}
	for _, c := range b.Context {
		d.Context = append(d.Context, c.Path)
	}
	if b.HasInstruction {
		body := f.Text()[f.Body.Start:f.Body.End]
		d.Instruction = compose.Size{Bytes: len(body), Tokens: len([]rune(string(body))) / 4}
	}
	return d
}

func printBundles(w io.Writer, bs []BundleInfo, o PrintOptions) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if o.Header {
		fmt.Fprintln(tw, "NAME\tVERSION\tNAMESPACE\tWHERE\tPATH")
	}
	for _, b := range bs {
		name := b.Name
		if name == "" {
			name = b.Key
		}
		at := b.Path
		if at == "" {
			at = b.URI + " (not on this machine)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", dash(name), dash(b.Version), dash(b.Namespace),
			Clean(o.Diagnostics.rel(b.Where)), Clean(at))
	}
	return tw.Flush()
}

// rel returns p relative to the printer's working directory when p is a
// path below it.
func (p DiagnosticPrinter) rel(s string) string {
	if !filepath.IsAbs(s) {
		return s
	}
	return DisplayPath(p.WorkDir, s)
}

// origin is "path:line" of o, the path as the printer shows paths.
func (p DiagnosticPrinter) origin(o compose.Origin) string {
	if o.Path == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", Clean(p.rel(o.Path)), o.Line)
}

func printBundle(w io.Writer, r *BundleResult, o PrintOptions) error {
	dp := o.Diagnostics
	fmt.Fprintf(w, "%s %s\t%s\n", dash(r.Name), dash(r.Version), Clean(r.Path))
	fmt.Fprintf(w, "namespace: %s\n", dash(r.Namespace))
	if r.Description != "" {
		fmt.Fprintf(w, "description: %s\n", oneLine(r.Description, 100))
	}
	if d := r.Declares; d != nil {
		if len(d.Includes) > 0 {
			fmt.Fprintln(w, "includes:")
			for _, in := range d.Includes {
				fmt.Fprintf(w, "  %s\t(line %d)\n", dash(in.Source), in.Line)
			}
		}
		for _, s := range []struct {
			k string
			v []string
		}{{"providers", d.Providers}, {"tools", d.Tools}, {"hooks", d.Hooks}, {"agents", d.Agents}, {"context", d.Context}} {
			if len(s.v) > 0 {
				names := make([]string, len(s.v))
				for i, n := range s.v {
					names[i] = dash(n)
				}
				fmt.Fprintf(w, "%s: %s\n", s.k, strings.Join(names, ", "))
			}
		}
		if d.Instruction.Bytes > 0 {
			fmt.Fprintf(w, "instruction: %s\n", sizeText(d.Instruction))
		}
	}
	if r.MountPlan != nil {
		if err := printComposed(w, r, dp); err != nil {
			return err
		}
	}
	if len(r.Diagnostics) > 0 {
		fmt.Fprintln(w)
		dp.Print(w, r.Diagnostics)
	}
	return nil
}

func sizeText(s compose.Size) string {
	return fmt.Sprintf("%s, ~%s", Plural(s.Bytes, "byte"), Plural(s.Tokens, "token"))
}

// printComposed prints a composition: the include tree, the agents and
// context files, the sizes, then the mount plan as YAML with where each
// part comes from in comments.
func printComposed(w io.Writer, r *BundleResult, dp DiagnosticPrinter) error {
	if r.Refused != "" {
		fmt.Fprintf(w, "refused by the runtime: %s\n", oneLine(r.Refused, 200))
	}
	if r.Includes != nil && len(r.Includes.Includes) > 0 {
		fmt.Fprintln(w, "includes:")
		var tree func(n *compose.IncludeNode, depth int)
		tree = func(n *compose.IncludeNode, depth int) {
			for _, ch := range n.Includes {
				at := ""
				if ch.Path != "" {
					at = "\t" + Clean(dp.rel(ch.Path))
				}
				msg := ""
				if ch.Message != "" {
					msg = ": " + oneLine(ch.Message, 120)
				}
				fmt.Fprintf(w, "%s%s%s\t%s%s\n", strings.Repeat("  ", depth), dash(ch.Source), at, ch.Status, msg)
				tree(ch, depth+1)
			}
		}
		tree(r.Includes, 1)
	}
	if len(r.Agents) > 0 {
		fmt.Fprintln(w, "agents:")
		for _, a := range r.Agents {
			switch {
			case a.Inline:
				fmt.Fprintf(w, "  %s\tinline\n", Clean(a.Name))
			case a.Path != "":
				fmt.Fprintf(w, "  %s\t%s\n", Clean(a.Name), Clean(dp.rel(a.Path)))
			default:
				fmt.Fprintf(w, "  %s\tunresolved: %s\n", Clean(a.Name), oneLine(a.Problem, 120))
			}
		}
	}
	if len(r.Context) > 0 {
		fmt.Fprintln(w, "context:")
		for _, c := range r.Context {
			if c.Exists {
				fmt.Fprintf(w, "  %s\t%s\t%s\n", Clean(c.Key), Clean(dp.rel(c.Path)), sizeText(c.Size))
			} else {
				why := c.Problem
				if why == "" {
					why = "no file"
				}
				fmt.Fprintf(w, "  %s\tunresolved: %s\n", Clean(c.Key), oneLine(why, 120))
			}
		}
	}
	if s := r.Sizes; s != nil {
		if r.Instruction != "" {
			fmt.Fprintf(w, "instruction: %s (%s)\n", sizeText(s.Instruction), Clean(dp.rel(r.Instruction)))
		}
		fmt.Fprintf(w, "context size: %s; with the instruction: %s\n", sizeText(s.Context), sizeText(s.Total))
	}
	text, err := planYAML(r.MountPlan, r.Origins, dp)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "---")
	fmt.Fprint(w, text)
	fmt.Fprintln(w, "---")
	return nil
}

// planYAML writes a mount plan as YAML, keys in their order, with the
// origin of each module and agent, and of the session and spawn keys, in
// comments.
func planYAML(p *compose.MountPlan, or *compose.Origins, dp DiagnosticPrinter) (string, error) {
	js, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return "", err
	}
	var plain func(n *yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0 // the encoder quotes what needs it
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(&doc)
	if or == nil {
		or = &compose.Origins{}
	}
	comment := func(n *yaml.Node, o compose.Origin) {
		if s := dp.origin(o); s != "" {
			n.LineComment = "from " + s
		}
	}
	// A key of session or spawn says where it comes from when no key
	// above it says the same file.
	var dotted func(m *yaml.Node, prefix, file string, origins map[string]compose.Origin)
	dotted = func(m *yaml.Node, prefix, file string, origins map[string]compose.Origin) {
		if m.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, f := prefix+m.Content[i].Value, file
			if o, ok := origins[k]; ok && o.Path != file {
				comment(m.Content[i], o)
				f = o.Path
			}
			dotted(m.Content[i+1], k+".", f, origins)
		}
	}
	if top := doc.Content; len(top) == 1 && top[0].Kind == yaml.MappingNode {
		m := top[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i].Value, m.Content[i+1]
			switch k {
			case "session":
				dotted(v, "", "", or.Session)
			case "spawn":
				dotted(v, "", "", or.Spawn)
			case "providers", "tools", "hooks":
				mods := map[string][]compose.ModuleOrigin{"providers": or.Providers, "tools": or.Tools, "hooks": or.Hooks}[k]
				for j, e := range v.Content {
					if j < len(mods) && e.Kind == yaml.MappingNode && len(e.Content) > 0 {
						comment(e.Content[0], mods[j].Origin)
					}
				}
			case "agents":
				for j := 0; j+1 < len(v.Content); j += 2 {
					if o, ok := or.Agents[v.Content[j].Value]; ok {
						comment(v.Content[j], o)
					}
				}
			}
		}
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}
