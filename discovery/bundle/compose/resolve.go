package compose

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned by Resolve when a reference names no bundle.
var ErrNotFound = errors.New("no such bundle")

// Bundles lists the bundles of the locations, each with its name,
// version, namespace and where it is: the repositories around the working
// directory, .amplifier/bundles/, $AMPLIFIER_HOME/bundles/, then the
// registered names (settings, registry.json, well-known), those in the
// cache with their file. A name registered twice is listed as the runtime
// resolves it (the last registration).
func (l *Locations) Bundles(files Files) []Found {
	var out []Found
	add := func(f Found) {
		if f.Path != "" {
			f.Namespace = namespaceOf(files, f.Path, f.Name)
		}
		out = append(out, f)
	}
	for _, f := range l.Repos {
		add(f)
	}
	for _, f := range l.Project {
		add(f)
	}
	for _, f := range l.User {
		add(f)
	}
	last := map[string]Registration{}
	var order []string
	for _, r := range l.Registrations {
		if _, ok := last[r.Name]; !ok {
			order = append(order, r.Name)
		}
		last[r.Name] = r
	}
	for _, name := range order {
		r := last[name]
		f := Found{Key: name, URI: r.URI, Where: r.From}
		if p := l.localPath(files, r.URI); p != "" {
			f.Path = p
			g := found(files, p, f.Where, name)
			f.Name, f.Version = g.Name, g.Version
		}
		add(f)
	}
	return out
}

// localPath returns the bundle file a URI loads, when it is on disk (a
// path, file://, or a git URI in the cache); "" otherwise.
func (l *Locations) localPath(files Files, uri string) string {
	u := ParseURI(uri)
	var p string
	switch {
	case u.IsFile():
		p = filepath.Clean(u.Path)
	case u.IsGit():
		p = filepath.Join(l.Env.CacheDir(), u.CacheDir())
	default:
		return ""
	}
	if u.Subpath != "" {
		p = filepath.Join(p, u.Subpath)
	}
	switch files.Stat(p) {
	case Directory:
		return rootBundleIn(files, p)
	case RegularFile:
		return p
	}
	return ""
}

// namespaceOf is the namespace a bundle file shares: its repository's
// root bundle's name (the nearest bundle.md or bundle.yaml above its
// directory), else its own name.
func namespaceOf(files Files, path, name string) string {
	dir := filepath.Dir(filepath.Dir(path))
	for i := 0; i < 32; i++ {
		if p := rootBundleIn(files, dir); p != "" {
			if f := found(files, p, "", ""); f.Name != "" {
				return f.Name
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return name
}

// Resolve finds the bundle file ref names: a path (absolute, or relative
// to the working directory; a directory's bundle.md or bundle.yaml), a
// name (as Bundles lists them: a repository's, a search path's file or
// directory, a registered name), or ns:path in a namespace's directory
// with the runtime's extension search. The error wraps ErrNotFound.
func (l *Locations) Resolve(files Files, ref string) (string, error) {
	p := ref
	if !filepath.IsAbs(p) {
		p = filepath.Join(l.Env.WorkDir, p)
	}
	switch files.Stat(p) {
	case RegularFile:
		return filepath.Clean(p), nil
	case Directory:
		if b := rootBundleIn(files, p); b != "" {
			return b, nil
		}
	}
	// The repository around the working directory first (a ruling), then
	// as the CLI finds a name: registered names, then the search paths.
	var all []Found
	listed := l.Bundles(files)
	for _, pass := range []func(Found) bool{
		func(f Found) bool { return f.Where == "repository" },
		func(f Found) bool { return f.URI != "" },
		func(f Found) bool { return f.Where == "project" },
		func(f Found) bool { return f.Where == "user" },
	} {
		for _, f := range listed {
			if pass(f) {
				all = append(all, f)
			}
		}
	}
	if ns, rel, ok := strings.Cut(ref, ":"); ok && !isURI(ref) {
		for _, f := range all {
			if f.Path != "" && (f.Name == ns || f.Key == ns) {
				ld := &loader{files: &recorder{files: files}}
				if r := ld.findResource(filepath.Join(filepath.Dir(f.Path), rel)); r != "" {
					if files.Stat(r) == Directory {
						r = rootBundleIn(files, r)
					}
					if r != "" {
						return r, nil
					}
				}
				return "", fmt.Errorf("%s: the namespace %s (%s) has no %s: %w", ref, ns, filepath.Dir(f.Path), rel, ErrNotFound)
			}
		}
		return "", fmt.Errorf("%s: no bundle is named %s here: %w", ref, ns, ErrNotFound)
	}
	if isURI(ref) {
		if p := l.localPath(files, ref); p != "" {
			return p, nil
		}
		return "", fmt.Errorf("%s is not on this machine (not in the cache %s): %w", ref, l.Env.CacheDir(), ErrNotFound)
	}
	for _, f := range all {
		if f.Name == ref || f.Key == ref {
			if f.Path == "" {
				return "", fmt.Errorf("%s is %s, which is not in the cache %s: %w", ref, f.URI, l.Env.CacheDir(), ErrNotFound)
			}
			return f.Path, nil
		}
	}
	return "", fmt.Errorf("%s is not a file, a registered name or a bundle of %s: %w", ref, l.Env.WorkDir, ErrNotFound)
}
