package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/amplidex/amplidex/query"
	"github.com/spf13/cobra"
)

func newVersionCmd(a *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the build: module version, VCS revision, commit and build times, Go version",
		Long: "version identifies this binary from the build information Go records: the module version\n" +
			"(a tag for `go install …@version`, \"(devel)\" for a work tree), the VCS revision and whether the\n" +
			"tree was modified (\"revision unknown\" when built with -buildvcs=false), the commit time, when\n" +
			"the executable was written, and the Go toolchain. `amplidex --version` prints the same.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := query.ReadBuild()
			if asJSON {
				return query.PrintJSON(a.Stdout, b)
			}
			_, err := fmt.Fprint(a.Stdout, versionText(b))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// versionText is what `amplidex version` prints.
func versionText(b query.Build) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "amplidex %s\n", b.Version)
	switch {
	case b.Revision == "":
		sb.WriteString("revision  unknown (built without VCS information, as with -buildvcs=false)\n")
	case b.Modified:
		fmt.Fprintf(&sb, "revision  %s (modified work tree)\n", b.Revision)
	default:
		fmt.Fprintf(&sb, "revision  %s\n", b.Revision)
	}
	if b.Time != "" {
		fmt.Fprintf(&sb, "committed %s\n", b.Time)
	}
	if !b.Built.IsZero() {
		fmt.Fprintf(&sb, "built     %s\n", b.Built.Format(time.RFC3339))
	}
	fmt.Fprintf(&sb, "go        %s %s\n", b.GoVersion, b.Platform)
	return sb.String()
}
