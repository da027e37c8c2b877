package prepare_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/amplidex/amplidex/prepare"
)

func TestParseSource(t *testing.T) {
	tests := []struct {
		in   string
		want prepare.Source
		err  string
	}{
		{in: "git+https://github.com/microsoft/amplifier-module-tool-bash@main",
			want: prepare.Source{Kind: prepare.SourceGit, URL: "https://github.com/microsoft/amplifier-module-tool-bash", Ref: "main"}},
		{in: "git+https://github.com/microsoft/amplifier-foundation@main#subdirectory=modules/tool-delegate",
			want: prepare.Source{Kind: prepare.SourceGit, URL: "https://github.com/microsoft/amplifier-foundation", Ref: "main", Subdirectory: "modules/tool-delegate"}},
		{in: "git+https://github.com/microsoft/amplifier-module-hooks-approval",
			want: prepare.Source{Kind: prepare.SourceGit, URL: "https://github.com/microsoft/amplifier-module-hooks-approval"}},
		{in: "git+ssh://git@github.com/org/repo.git@v1.2.0",
			want: prepare.Source{Kind: prepare.SourceGit, URL: "ssh://git@github.com/org/repo.git", Ref: "v1.2.0"}},
		{in: "git+ssh://git@github.com/org/repo.git",
			want: prepare.Source{Kind: prepare.SourceGit, URL: "ssh://git@github.com/org/repo.git"}},
		{in: "git+file:///srv/repos/tool-x@feature/y#subdirectory=./mod/&egg=tool_x",
			want: prepare.Source{Kind: prepare.SourceGit, URL: "file:///srv/repos/tool-x", Ref: "feature/y", Subdirectory: "mod"}},
		{in: "file:///opt/modules/tool-x", want: prepare.Source{Kind: prepare.SourceFile, Path: "/opt/modules/tool-x"}},
		{in: "file://localhost/opt/my%20tool", want: prepare.Source{Kind: prepare.SourceFile, Path: "/opt/my tool"}},
		{in: "./modules/context-simple", want: prepare.Source{Kind: prepare.SourceLocal, Path: "./modules/context-simple"}},
		{in: "/opt/my modules/x", want: prepare.Source{Kind: prepare.SourceLocal, Path: "/opt/my modules/x"}},

		{in: "", err: "empty"},
		{in: "https://github.com/org/repo", err: "unsupported scheme"},
		{in: "git+github.com/org/repo@main", err: "want git+https://"},
		{in: "git+https://github.com@main", err: "no path"},
		{in: "git+https:///org/repo@main", err: "no host"},
		{in: "git+https://github.com/org/repo@", err: "empty ref"},
		{in: "git+https://github.com/org/repo@--upload-pack=x", err: "starts with '-'"},
		{in: "git+https://github.com/org/repo@a..b", err: "not a valid git ref"},
		{in: "git+https://github.com/org/repo@main#subdirectory=../x", err: "leaves the repository"},
		{in: "git+https://github.com/org/repo@main#subdirectory=/x", err: "relative"},
		{in: "git+https://github.com/org/repo@main#subdirectory=", err: "empty subdirectory"},
		{in: "git+https://github.com/org/repo@main#branch=x", err: "unknown fragment key"},
		{in: "git+https://github.com/org/my repo@main", err: "contains"},
		{in: "file://server/share/x", err: "this machine"},
		{in: "file:relative/x", err: "absolute path"},
		{in: "./x\n", err: "contains"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := prepare.ParseSource(tc.in)
			if tc.err != "" {
				if err == nil || !errors.Is(err, prepare.ErrInvalidSource) || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("ParseSource(%q) = %+v, %v; want an ErrInvalidSource with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseSource(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzParseSource checks that ParseSource never panics, that every error
// wraps ErrInvalidSource, and that a parsed source prints back to a string
// that parses to the same source.
func FuzzParseSource(f *testing.F) {
	for _, s := range []string{
		"git+https://github.com/microsoft/amplifier-foundation@main#subdirectory=modules/tool-delegate",
		"git+ssh://git@github.com/org/repo.git@v1",
		"git+file:///srv/x@0123456789abcdef0123456789abcdef01234567",
		"file:///opt/x",
		"./modules/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		src, err := prepare.ParseSource(s)
		if err != nil {
			if !errors.Is(err, prepare.ErrInvalidSource) {
				t.Fatalf("ParseSource(%q): %v does not wrap ErrInvalidSource", s, err)
			}
			return
		}
		again, err := prepare.ParseSource(src.String())
		if err != nil || again != src {
			t.Fatalf("ParseSource(%q) = %+v; its String %q parses to %+v, %v", s, src, src.String(), again, err)
		}
	})
}
