package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
)

// checkReport is what `check --json` prints.
type checkReport struct {
	Diagnostics []discovery.Diagnostic `json:"diagnostics"`
	Summary     checkSummary           `json:"summary"`
}

type checkSummary struct {
	query.Summary
	Collections int `json:"collections"`
}

func (a *App) runCheck(ctx context.Context, opts *checkOptions) error {
	if opts.json {
		opts.format = "json"
	}
	switch opts.format {
	case "text", "json", "github":
	default:
		return exitf(exitUsage, "check: unknown --format %q: want text, json or github", opts.format)
	}
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	var (
		diags   []discovery.Diagnostic
		checked int
	)
	if len(opts.paths) == 0 {
		v, _ := ws.view()
		diags, checked = slices.Clone(v.Diagnostics()), v.Set.Len()
	} else {
		diags, checked, err = a.checkPaths(ws, opts.paths)
		if err != nil {
			return err
		}
	}
	discovery.SortDiagnostics(diags)
	report := checkReport{Diagnostics: diags, Summary: checkSummary{Summary: summarize(diags), Collections: checked}}
	if report.Diagnostics == nil {
		report.Diagnostics = []discovery.Diagnostic{}
	}
	switch opts.format {
	case "json":
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return err
		}
	case "github":
		writeGitHub(a.Stdout, diags)
	default:
		a.diagnosticPrinter(a.Stdout).Print(a.Stdout, diags)
		fmt.Fprintln(a.Stdout, summaryLine(report.Summary))
	}
	if report.Summary.Errors > 0 {
		return exitCode(exitFailed)
	}
	return nil
}

// checkPaths checks each path: a file, a collection directory, or a root
// holding collections. Cross-references resolve against the named
// collections first, then the workspace's roots.
func (a *App) checkPaths(ws *workspace, paths []string) ([]discovery.Diagnostic, int, error) {
	loader := ws.loader()
	var (
		named      []*discovery.Collection // collections named on the command line
		files      = map[string]bool{}     // single files asked for
		fileOwners []*discovery.Collection
	)
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, 0, exitf(exitUsage, "check: %v", err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, 0, exitf(exitUsage, "check: %v", err)
		}
		if !fi.IsDir() {
			files[abs] = true
			if c := ownerCollection(loader, abs); c != nil {
				fileOwners = append(fileOwners, c)
			}
			continue
		}
		if looksLikeCollection(abs) {
			if c := loader.Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(abs)}, abs); c != nil {
				named = append(named, c)
				continue
			}
		}
		cs, err := loader.ScanRoot(discovery.Root{Kind: discovery.RootArgument, Path: abs})
		if err != nil {
			return nil, 0, exitf(exitUsage, "check: %v", err)
		}
		named = append(named, cs...)
	}
	top := append(append([]*discovery.Collection(nil), named...), fileOwners...)
	_, cat := ws.view()
	view, _ := cat.WithArguments(ws.daemonProject(), top)

	var diags []discovery.Diagnostic
	for _, c := range named {
		diags = append(diags, view.CollectionDiagnostics(c)...)
	}
	for _, c := range fileOwners {
		for _, d := range view.CollectionDiagnostics(c) {
			if files[d.Path] {
				diags = append(diags, d)
			}
		}
	}
	// Files outside any collection: checked on their own.
	for f := range files {
		if owned(fileOwners, f) {
			continue
		}
		ds, err := checkLoneFile(ws, f)
		if err != nil {
			return nil, 0, err
		}
		diags = append(diags, ds...)
	}
	return diags, len(named) + len(fileOwners), nil
}

// looksLikeCollection tells a collection directory from a root holding
// collections: a collection has a pyproject.toml or a resource directory at
// its top, or pip's metadata (a *.dist-info directory).
func looksLikeCollection(dir string) bool {
	shape, err := discovery.DetectShape(dir, "")
	if err != nil {
		return false
	}
	if shape.Layout == discovery.LayoutFlat || shape.Pyproject == filepath.Join(dir, "pyproject.toml") {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.dist-info"))
	return len(m) > 0
}

// ownerCollection loads the collection that holds file, looking upwards
// from its directory; nil when no ancestor is a collection.
func ownerCollection(loader *discovery.Loader, file string) *discovery.Collection {
	for dir := filepath.Dir(file); ; {
		shape, err := discovery.DetectShape(dir, "")
		if err == nil && shape.IsCollection() {
			c := loader.Load(discovery.Root{Kind: discovery.RootArgument, Path: filepath.Dir(dir)}, dir)
			if c != nil && (c.Facts[file] != nil || c.Pyproject == file) {
				return c
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

func owned(cs []*discovery.Collection, file string) bool {
	for _, c := range cs {
		if c.Facts[file] != nil || c.Pyproject == file {
			return true
		}
	}
	return false
}

// checkLoneFile checks one file that no collection holds, its kind told by
// its name and directory. path is absolute. Only a regular file of at most
// the document limit is read: a FIFO, a device or a link to one named on
// the command line is a usage error naming it, never a hang.
//
// A bundle manifest gets the checks prepare --dry-run and the language
// server make: its schema, default_provider, the agents it includes, its
// module sources and its mentions.
func checkLoneFile(ws *workspace, path string) ([]discovery.Diagnostic, error) {
	src, err := discovery.ReadFile(path, discovery.DefaultMaxFileSize)
	if err != nil {
		return nil, exitf(exitUsage, "check: %v", err)
	}
	base, dir := filepath.Base(path), filepath.Base(filepath.Dir(path))
	switch {
	case base == "pyproject.toml":
		_, ds := discovery.ParsePyproject(path, src)
		return ds, nil
	case base == "collections.lock":
		_, ds, _ := discovery.ParseLock(path, src)
		return ds, nil
	case base == "bundle.md":
		return prepare.CheckManifest(path, src, ws.schemaOptions()), nil
	case strings.HasSuffix(base, ".md") && dir == "profiles":
		return discovery.ParseDocument(path, src, discovery.DocProfile, ws.schemaOptions()).Diagnostics, nil
	case strings.HasSuffix(base, ".md") && dir == "agents":
		kind := discovery.DocAgent
		if isFileAt(filepath.Join(filepath.Dir(filepath.Dir(path)), "bundle.md")) {
			kind = discovery.DocBundleAgent
		}
		return discovery.ParseDocument(path, src, kind, ws.schemaOptions()).Diagnostics, nil
	}
	return nil, exitf(exitUsage, "check: cannot tell what %s is: expected profiles/*.md, agents/*.md, bundle.md, pyproject.toml or collections.lock", path)
}

func isFileAt(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// summarize counts diagnostics by severity and file.
func summarize(ds []discovery.Diagnostic) query.Summary {
	var s query.Summary
	files := map[string]bool{}
	for _, d := range ds {
		files[d.Path] = true
		switch d.Severity {
		case discovery.SeverityError:
			s.Errors++
		case discovery.SeverityWarning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	s.Files = len(files)
	return s
}

func summaryLine(s checkSummary) string {
	return fmt.Sprintf("%s, %s, %s in %s (%s checked)",
		query.Plural(s.Errors, "error"), query.Plural(s.Warnings, "warning"), query.Plural(s.Infos, "note"),
		query.Plural(s.Files, "file"), query.Plural(s.Collections, "collection"))
}

// writeGitHub prints diagnostics as GitHub Actions workflow commands.
func writeGitHub(w io.Writer, ds []discovery.Diagnostic) {
	wd, _ := os.Getwd()
	for _, d := range ds {
		kind := "notice"
		switch d.Severity {
		case discovery.SeverityError:
			kind = "error"
		case discovery.SeverityWarning:
			kind = "warning"
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n",
			kind, ghEscapeProp(query.DisplayPath(wd, d.Path)), d.Range.Start.Line+1, d.Range.Start.Character+1,
			d.Range.End.Line+1, d.Range.End.Character+1, ghEscapeProp(d.Code), ghEscapeData(d.Message))
	}
}

func ghEscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghEscapeProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
