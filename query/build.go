package query

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/amplidex/amplidex/discovery/syntax"
)

// Build identifies a build of amplidex: what `amplidex version` prints and
// what a daemon reports in "status" and "version", so that a client can
// tell a daemon of another build.
type Build struct {
	// Version is the version a release stamped in, else the main module's
	// version: a tag or pseudo-version for `go install …@version`, and for
	// a build from a work tree what Go records ("(devel)", or since Go 1.24
	// a pseudo-version from the checkout, "+dirty" when it had changes).
	Version string `json:"version"`
	// Revision is the VCS revision (vcs.revision); empty when the build
	// carries none (-buildvcs=false, or no VCS at build time).
	Revision string `json:"revision,omitempty"`
	// Time is when that revision was committed (vcs.time).
	Time string `json:"time,omitempty"`
	// Modified is set when the work tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go toolchain the binary was built with.
	GoVersion string `json:"go_version"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
	// Built is the modification time of the executable: when it was built
	// or installed. Zero when it cannot be read.
	Built time.Time `json:"built,omitzero"`
}

// stampedVersion is the version a release build stamps in with
//
//	-ldflags "-X github.com/amplidex/amplidex/query.stampedVersion=v1.2.3"
//
// (see .goreleaser.yaml), which ReadBuild reports before the module
// version of the build information: a release is built from a checkout,
// where Go records a pseudo-version or "(devel)". The linker sets it; the
// program never writes it.
var stampedVersion string

// ReadBuild returns the running program's Build.
func ReadBuild() Build {
	b := Build{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		b.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if stampedVersion != "" {
		b.Version = stampedVersion
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			b.Built = fi.ModTime().UTC()
		}
	}
	return b
}

// released reports whether the version names a release or a commit
// (a tag or a pseudo-version), rather than a work tree.
func (b Build) released() bool {
	return b.Version != "" && b.Version != "(devel)" && !strings.HasSuffix(b.Version, "+dirty")
}

// Same reports whether b and o are one build. Version, revision, the
// modified flag, the toolchain and the platform must match; a build that
// names no commit (a work tree without VCS stamps) or one of a modified
// work tree is only the same as a binary written at the same instant.
func (b Build) Same(o Build) bool {
	if b.Version != o.Version || b.Revision != o.Revision || b.Modified != o.Modified ||
		b.GoVersion != o.GoVersion || b.Platform != o.Platform {
		return false
	}
	if b.Modified || (b.Revision == "" && !b.released()) {
		return b.Built.Equal(o.Built)
	}
	return true
}

// Newer reports whether b is a newer build than o, so that a client of
// build b replaces a daemon of build o that a client started, and never
// the other way round: two builds on one machine (an editor's, a
// shell's) do not replace each other's daemon in turn. The rule:
//
//   - Two builds of a version (a release tag, or the pseudo-version Go
//     gives a clean checkout, which sorts after the tag it follows): the
//     higher version, then the later commit (vcs.time).
//   - A build of a work tree ("(devel)", or a version ending in "+dirty")
//     is newer than any build of a version: whoever built one from a work
//     tree means to run it.
//   - Two builds of work trees: the later commit, then the executable
//     written later.
//
// Two builds it cannot order (the same version and commit, or nothing to
// tell them apart by) are neither newer than the other.
func (b Build) Newer(o Build) bool { return compareBuilds(b, o) > 0 }

// compareBuilds orders two builds by the rule of Newer: -1, 0 or +1.
func compareBuilds(b, o Build) int {
	bTree, oTree := !b.released(), !o.released()
	switch {
	case bTree && !oTree:
		return 1
	case !bTree && oTree:
		return -1
	case !bTree:
		bv, berr := syntax.ParseVersion(strings.TrimPrefix(b.Version, "v"))
		ov, oerr := syntax.ParseVersion(strings.TrimPrefix(o.Version, "v"))
		if berr != nil || oerr != nil {
			return 0 // not semantic versions: nothing to order by
		}
		if c := bv.Compare(ov); c != 0 {
			return c
		}
		return compareTimes(b.Time, o.Time)
	}
	if c := compareTimes(b.Time, o.Time); c != 0 {
		return c
	}
	if b.Built.IsZero() || o.Built.IsZero() {
		return 0
	}
	return b.Built.Compare(o.Built)
}

// compareTimes orders two commit times (vcs.time, RFC 3339); 0 when
// either is missing or not a time.
func compareTimes(a, b string) int {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	if errA != nil || errB != nil {
		return 0
	}
	return ta.Compare(tb)
}

// Key returns a string that two builds share exactly when Same says they
// are one build. A request names its client's build by it (Request.Build).
func (b Build) Key() string {
	var k []byte
	for _, f := range []string{b.Version, b.Revision, b.GoVersion, b.Platform} {
		k = append(strconv.AppendInt(k, int64(len(f)), 10), ':')
		k = append(k, f...)
	}
	if b.Modified {
		k = append(k, " modified"...)
	}
	if b.Modified || (b.Revision == "" && !b.released()) {
		k = b.Built.UTC().AppendFormat(append(k, " built "...), time.RFC3339Nano)
	}
	return string(k)
}

// Short returns the revision's first 12 digits and "+modified" when the
// work tree had changes, or "revision unknown".
func (b Build) Short() string {
	if b.Revision == "" {
		return "revision unknown"
	}
	r := b.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if b.Modified {
		r += "+modified"
	}
	return r
}

// String returns a one-line description: version, revision, toolchain.
func (b Build) String() string {
	s := fmt.Sprintf("%s (%s, %s %s", b.Version, b.Short(), b.GoVersion, b.Platform)
	if !b.Built.IsZero() {
		s += ", built " + b.Built.Format(time.RFC3339)
	}
	return s + ")"
}
