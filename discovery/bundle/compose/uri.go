package compose

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// URI is a bundle source as the runtime's parse_uri reads it.
type URI struct {
	Scheme  string // git+https, file, https, zip+https, or "" for a name
	Host    string
	Path    string // the repository path, the local path, or the name
	Ref     string // for git: the branch, tag or commit ("main" when none)
	Subpath string // the #subdirectory= fragment
}

var gitPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([^@]+)(?:@(.+))?$`) })

// ParseURI reads a source as the runtime's parse_uri does.
func ParseURI(s string) URI {
	switch {
	case strings.HasPrefix(s, "git+"), strings.HasPrefix(s, "zip+"):
		prefix := s[:4]
		rest := s[4:]
		var sub string
		if i := strings.IndexByte(rest, '#'); i >= 0 {
			sub = subdirectory(rest[i+1:])
			rest = rest[:i]
		}
		u := URI{Subpath: sub}
		scheme, host, p := splitURL(rest)
		u.Scheme, u.Host, u.Path = prefix+scheme, host, p
		if prefix == "git+" {
			if m := gitPath().FindStringSubmatch(p); m != nil {
				u.Path, u.Ref = m[1], m[2]
				if u.Ref == "" {
					u.Ref = "main"
				}
			}
		}
		return u
	case strings.HasPrefix(s, "file://"):
		p, frag, _ := strings.Cut(s[len("file://"):], "#")
		return URI{Scheme: "file", Path: p, Subpath: subdirectory(frag)}
	case strings.HasPrefix(s, "/"), strings.HasPrefix(s, "./"), strings.HasPrefix(s, "../"):
		return URI{Scheme: "file", Path: s}
	case strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		rest, frag, _ := strings.Cut(s, "#")
		scheme, host, p := splitURL(rest)
		return URI{Scheme: scheme, Host: host, Path: p, Subpath: subdirectory(frag)}
	}
	if name, sub, ok := strings.Cut(s, "/"); ok {
		return URI{Path: name, Subpath: sub}
	}
	return URI{Path: s}
}

// splitURL splits scheme://host/path?query as urlparse does (the query
// and parameters are not part of the path).
func splitURL(s string) (scheme, host, p string) {
	u, err := url.Parse(s)
	if err != nil {
		scheme, rest, _ := strings.Cut(s, "://")
		host, p, _ = strings.Cut(rest, "/")
		return scheme, host, "/" + p
	}
	host = u.Host
	if u.User != nil {
		host = u.User.String() + "@" + host
	}
	return u.Scheme, host, u.EscapedPath()
}

// subdirectory returns the value of subdirectory= in a fragment.
func subdirectory(frag string) string {
	for _, part := range strings.Split(frag, "&") {
		if v, ok := strings.CutPrefix(part, "subdirectory="); ok {
			return v
		}
	}
	return ""
}

// IsGit, IsFile and IsName classify a URI as the runtime's handlers do.
func (u URI) IsGit() bool  { return u.Scheme == "git" || strings.HasPrefix(u.Scheme, "git+") }
func (u URI) IsFile() bool { return u.Scheme == "file" }

// GitURL returns the repository URL a git URI clones, without git+ and ref.
func (u URI) GitURL() string {
	return strings.TrimPrefix(u.Scheme, "git+") + "://" + u.Host + u.Path
}

// CacheDir returns the directory name under $AMPLIFIER_HOME/cache where the
// runtime keeps the checkout of a git URI: the repository's name, a dash,
// and the first 16 hex digits of sha256("<url>@<ref>").
func (u URI) CacheDir() string {
	ref := u.Ref
	if ref == "" {
		ref = "HEAD"
	}
	sum := sha256.Sum256([]byte(u.GitURL() + "@" + ref))
	repo := path.Base(strings.TrimRight(u.Path, "/"))
	return repo + "-" + hex.EncodeToString(sum[:])[:16]
}

// isURI reports whether an include source is a URI the runtime takes as
// is (git+…, anything with ://).
func isURI(s string) bool { return strings.Contains(s, "://") || strings.HasPrefix(s, "git+") }

// baseURI returns s without its #fragment.
func baseURI(s string) string {
	b, _, _ := strings.Cut(s, "#")
	return b
}

// withSuffix is Python's PurePath.with_suffix.
func withSuffix(p, suffix string) string {
	dir, name := filepath.Split(p)
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		name = name[:i]
	}
	return dir + name + suffix
}

// pathLess is Python's comparison of two absolute paths (by their parts).
func pathLess(a, b string) bool {
	pa, pb := parts(a), parts(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

func parts(p string) []string {
	p = filepath.Clean(p)
	if p == "/" {
		return []string{"/"}
	}
	return append([]string{"/"}, strings.Split(strings.TrimPrefix(p, "/"), "/")...)
}
