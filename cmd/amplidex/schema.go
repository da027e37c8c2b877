package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/discovery/schema"
)

// schemaKinds are the documents schema describes.
var schemaKinds = []string{"profile", "agent", "bundle"}

func newSchemaCmd(a *App) *cobra.Command {
	return &cobra.Command{
		Use:   "schema profile|agent|bundle",
		Short: "Print the JSON Schema of a document's front matter, for yaml-language-server",
		Long: "schema prints a draft-07 JSON Schema of the front matter of profiles, agents or bundle manifests,\n" +
			"built from the tables the validator uses, so editors running yaml-language-server complete keys too.",
		Args:      exactArgs("profile|agent|bundle"),
		ValidArgs: schemaKinds,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runSchema(args[0])
		},
	}
}

func (a *App) runSchema(kind string) error {
	for _, k := range []schema.DocKind{schema.DocProfile, schema.DocAgent, schema.DocBundle} {
		if string(k) != kind {
			continue
		}
		b, err := schema.JSON(k)
		if err != nil {
			return exitf(exitUsage, "schema %s: %v", kind, err)
		}
		if _, err := a.Stdout.Write(b); err != nil {
			return err
		}
		if len(b) == 0 || b[len(b)-1] != '\n' {
			fmt.Fprintln(a.Stdout)
		}
		return nil
	}
	return exitf(exitUsage, "schema: unknown kind %q: want profile, agent or bundle%s", kind, didYouMean(kind, schemaKinds))
}
