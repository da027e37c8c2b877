package prepare

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SourceKind tells how a module source is fetched.
type SourceKind string

// The kinds of module source.
const (
	SourceGit   SourceKind = "git"   // git+URL[@ref][#subdirectory=path]: cloned into the module cache
	SourceFile  SourceKind = "file"  // file:///absolute/path: used in place
	SourceLocal SourceKind = "local" // a path, relative to the manifest's directory: used in place
)

// Source is a parsed module source.
type Source struct {
	Kind SourceKind `json:"kind"`
	// URL is the repository of a git source, without the "git+" prefix.
	URL string `json:"url,omitempty"`
	// Ref is the branch, tag or commit of a git source; "" means the
	// repository's default branch.
	Ref string `json:"ref,omitempty"`
	// Subdirectory is the module's directory inside a git repository,
	// slash-separated and relative; "" means the repository's root.
	Subdirectory string `json:"subdirectory,omitempty"`
	// Path is the directory of a file or local source, as written (a file
	// URL's path, decoded).
	Path string `json:"path,omitempty"`
}

// isGitScheme reports whether a git source may use URL scheme s.
func isGitScheme(s string) bool {
	switch s {
	case "https", "http", "ssh", "git", "file":
		return true
	}
	return false
}

// ParseSource parses a module source: git+URL[@ref][#subdirectory=path], a
// file:// URL, or a local path. Errors wrap ErrInvalidSource.
func ParseSource(s string) (Source, error) {
	if err := checkText(s, false); err != nil {
		return Source{}, invalidSource(s, err.Error())
	}
	isURL := strings.HasPrefix(s, "git+") || strings.HasPrefix(s, "file:") || strings.Contains(s, "://")
	if err := checkText(s, isURL); isURL && err != nil {
		return Source{}, invalidSource(s, err.Error())
	}
	switch {
	case s == "":
		return Source{}, invalidSource(s, "empty")
	case strings.HasPrefix(s, "git+"):
		return parseGitSource(s)
	case strings.HasPrefix(s, "file:"):
		return parseFileSource(s)
	case strings.Contains(s, "://"):
		scheme, _, _ := strings.Cut(s, "://")
		return Source{}, invalidSource(s, fmt.Sprintf("unsupported scheme %q (want git+URL@ref, file:// or a path)", scheme))
	}
	return Source{Kind: SourceLocal, Path: s}, nil
}

func parseGitSource(s string) (Source, error) {
	rest := strings.TrimPrefix(s, "git+")
	src := Source{Kind: SourceGit}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		sub, err := parseFragment(rest[i+1:])
		if err != nil {
			return Source{}, invalidSource(s, err.Error())
		}
		src.Subdirectory = sub
		rest = rest[:i]
	}
	scheme, afterScheme, ok := strings.Cut(rest, "://")
	if !ok || !isGitScheme(scheme) {
		return Source{}, invalidSource(s, "want git+https://, git+ssh://, git+http://, git+git:// or git+file:// before the repository")
	}
	// The ref's "@" follows the repository path; an "@" before the first
	// "/" belongs to the user part of the host (ssh://git@host/…).
	slash := strings.IndexByte(afterScheme, '/')
	if slash < 0 {
		return Source{}, invalidSource(s, "the repository URL has no path")
	}
	if at := strings.LastIndexByte(afterScheme, '@'); at > slash {
		src.Ref = afterScheme[at+1:]
		afterScheme = afterScheme[:at]
		if err := checkRef(src.Ref); err != nil {
			return Source{}, invalidSource(s, err.Error())
		}
	}
	src.URL = scheme + "://" + afterScheme
	u, err := url.Parse(src.URL)
	if err != nil {
		return Source{}, invalidSource(s, "bad repository URL: "+err.Error())
	}
	if scheme != "file" && u.Host == "" {
		return Source{}, invalidSource(s, "the repository URL has no host")
	}
	if strings.Trim(u.Path, "/") == "" {
		return Source{}, invalidSource(s, "the repository URL has no path")
	}
	return src, nil
}

// parseFragment reads "subdirectory=path" (and ignores pip's "egg=name").
func parseFragment(frag string) (string, error) {
	var sub string
	for _, part := range strings.Split(frag, "&") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "subdirectory":
			if v == "" {
				return "", fmt.Errorf("empty subdirectory")
			}
			if strings.HasPrefix(v, "/") || strings.Contains(v, `\`) {
				return "", fmt.Errorf("subdirectory %q must be a relative, slash-separated path", v)
			}
			clean := path.Clean(v)
			if clean == ".." || strings.HasPrefix(clean, "../") {
				return "", fmt.Errorf("subdirectory %q leaves the repository", v)
			}
			if clean == "." {
				clean = ""
			}
			sub = clean
		case "egg":
		default:
			return "", fmt.Errorf("unknown fragment key %q (want subdirectory=path)", k)
		}
	}
	return sub, nil
}

func parseFileSource(s string) (Source, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Source{}, invalidSource(s, "bad file URL: "+err.Error())
	}
	if u.Host != "" && u.Host != "localhost" {
		return Source{}, invalidSource(s, "a file URL names a path on this machine: file:///path")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Source{}, invalidSource(s, "a file URL takes no query or fragment")
	}
	if !strings.HasPrefix(u.Path, "/") {
		return Source{}, invalidSource(s, "a file URL names an absolute path: file:///path")
	}
	return Source{Kind: SourceFile, Path: filepath.FromSlash(u.Path)}, nil
}

// String returns the source in the canonical form ParseSource reads.
func (s Source) String() string {
	switch s.Kind {
	case SourceGit:
		out := "git+" + s.URL
		if s.Ref != "" {
			out += "@" + s.Ref
		}
		if s.Subdirectory != "" {
			out += "#subdirectory=" + s.Subdirectory
		}
		return out
	case SourceFile:
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(s.Path)}).String()
	}
	return s.Path
}

// Repo returns "URL@ref" for a git source: what is cloned, shared by every
// module of one repository at one ref.
func (s Source) Repo() string {
	if s.Ref == "" {
		return s.URL
	}
	return s.URL + "@" + s.Ref
}

// checkRef rejects refs git would read as options or refuse outright.
func checkRef(ref string) error {
	switch {
	case ref == "":
		return fmt.Errorf("empty ref after @")
	case strings.HasPrefix(ref, "-"):
		return fmt.Errorf("ref %q starts with '-'", ref)
	case strings.Contains(ref, ".."), strings.ContainsAny(ref, "~^:?*[\\"),
		strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, ".lock"), strings.HasPrefix(ref, "/"):
		return fmt.Errorf("ref %q is not a valid git ref name", ref)
	}
	return nil
}

// checkText rejects control characters and invalid UTF-8, which no source
// may contain, and white space when url is true.
func checkText(s string, url bool) error {
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError || (url && unicode.IsSpace(r)) {
			return fmt.Errorf("contains %q", r)
		}
	}
	return nil
}

func invalidSource(s, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidSource, s, why)
}
