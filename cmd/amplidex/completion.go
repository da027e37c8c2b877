package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/amplidex/amplidex/discovery"
	"github.com/amplidex/amplidex/discovery/diag"
	"github.com/amplidex/amplidex/query/lint"
)

// completer is what cobra calls to complete an argument or a flag value.
type completer = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// fixedCompletion completes one of values.
func fixedCompletion(values ...string) completer {
	return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, prefix) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCodes completes diagnostic codes and their areas.
func completeCodes(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var out []string
	seen := map[string]bool{}
	for _, c := range diag.Codes {
		area, _, _ := strings.Cut(c.Code, "/")
		if area += "/"; !seen[area] && strings.HasPrefix(area, prefix) {
			seen[area] = true
			out = append(out, area+"\tevery "+area+" code")
		}
		if strings.HasPrefix(c.Code, prefix) {
			out = append(out, c.Code+"\t"+c.Summary)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeFromView completes the first argument with what list finds, for
// prefix, among the winning collections of this project's view.
func (a *App) completeFromView(list func(winners []*discovery.Collection, prefix string) []string) completer {
	return func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ws, err := a.workspace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		v, _ := ws.View()
		return list(v.Set.Winners(), prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCollectionNames completes collection names for the subcommands
// that take one.
func (a *App) completeCollectionNames() completer {
	return a.completeFromView(lint.CollectionNames)
}

// completeRefs completes "collection:name" references to the resources
// of kind k of the winning collections (for query profile and query
// agent).
func (a *App) completeRefs(k discovery.Kind) completer {
	return a.completeFromView(func(winners []*discovery.Collection, prefix string) []string {
		return lint.Refs(winners, k, prefix)
	})
}
