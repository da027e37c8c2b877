package lint

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/catalog"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/discovery/syntax"
	"github.com/amplidex/amplidex/prepare"
	"github.com/amplidex/amplidex/query"
	"github.com/amplidex/amplidex/query/analysis"
)

// maxFixRounds bounds the rounds of fixes made to one file: a fix can
// bring another to light (a key renamed to agents, its misspelt agent is
// seen), and each round fixes what the one before left.
const maxFixRounds = 10

// FileFix is what check --fix changes in one file.
type FileFix struct {
	// Path is the file.
	Path     string
	old, new []byte
	// Fixed counts the edits made.
	Fixed int
	// Unsafe are the fixes left out: they would make a duplicate
	// or break the file's structure (without --unsafe-fixes).
	Unsafe []analysis.UnsafeFix
}

// oneView is the analysis.Views of a check: the View it checked, for every
// project.
type oneView struct{ v *catalog.View }

func (o oneView) View(context.Context, string) (*catalog.View, error) { return o.v, nil }

func (o oneView) WithArguments(_ context.Context, _ string, cols []*discovery.Collection) (*catalog.View, error) {
	return o.v.WithArguments(cols), nil
}

func (oneView) Changed(string) {}

// fixFiles works out, file by file, the fixes of the diagnostics ds that
// check reports over the View v: the language server's own quick fixes
// that need no choice (analysis.Workspace.Fixes), in rounds, each round over
// the text the one before left, its diagnostics decided as check decides
// them (suppression comments, then the policy). The unsafe ones are left
// out, and kept to be said, unless withUnsafe asks for them.
//
// The files of bundle repositories (bundles, by path) get the fixes of
// check.Result.Fix instead.
func fixFiles(ctx context.Context, ws *Workspace, v *catalog.View, pol *Policy, ds []diag.Diagnostic, withUnsafe bool, bundles map[string]bundleFile, log *slog.Logger) ([]FileFix, error) {
	w := analysis.NewWorkspace(oneView{v}, analysis.WorkspaceOptions{Project: ws.DaemonProject(), Schema: ws.SchemaOptions(),
		CheckBundle: prepare.CheckManifest, Log: log})
	byFile := map[string][]diag.Diagnostic{}
	for _, d := range ds {
		byFile[d.Path] = append(byFile[d.Path], d)
	}
	var out []FileFix
	fixBundle := bundleFixer(pol)
	for _, path := range slices.Sorted(maps.Keys(byFile)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if bf, ok := bundles[path]; ok {
			if text, n := fixBundle(bf); n > 0 {
				out = append(out, FileFix{Path: path, old: bf.file.Text(), new: text, Fixed: n})
			}
			continue
		}
		old, err := syntax.ReadFile(path, syntax.DefaultMaxFileSize)
		if err != nil {
			continue // a directory, or a file that cannot be read: nothing to fix in it
		}
		f := FileFix{Path: path, old: old, new: old}
		fileDs := byFile[path]
		for range maxFixRounds {
			edits, unsafe := w.Fixes(ctx, v, path, f.new, fileDs, withUnsafe)
			f.Unsafe = unsafe // what the last round left
			if len(edits) == 0 {
				break
			}
			if f.new, err = analysis.ApplyEdits(f.new, edits); err != nil {
				return nil, fmt.Errorf("fix %s: %w", path, err)
			}
			f.Fixed += len(edits)
			// Diagnose applies the file's suppression comments, as every
			// surface does.
			fileDs = pol.FilterFile(path, w.Diagnose(ctx, path, f.new, nil), func(error) {})
		}
		if f.Fixed > 0 || len(f.Unsafe) > 0 {
			out = append(out, f)
		}
	}
	return out, nil
}

// WriteFixes writes the fixed files, each in place (see writeFix), and
// returns those written. A file left as it is, with why, is said
// through warn; the others are written still. opened is writeFix's.
func WriteFixes(fixes []FileFix, opened func(string), warn func(error)) []FileFix {
	var written []FileFix
	for _, f := range fixes {
		if err := writeFix(f, opened); err != nil {
			warn(err)
			continue
		}
		written = append(written, f)
	}
	return written
}

// WriteDiff prints the fixes as a unified diff, paths relative to the
// working directory.
func WriteDiff(w io.Writer, fixes []FileFix) {
	wd, _ := os.Getwd()
	for _, f := range fixes {
		name := filepath.ToSlash(query.DisplayPath(wd, f.Path))
		fmt.Fprintf(w, "--- a/%s\n+++ b/%s\n", name, name)
		io.WriteString(w, syntax.UnifiedDiff(f.old, f.new))
	}
}
