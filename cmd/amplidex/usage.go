package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// suggestDistance is the edit distance within which a mistyped subcommand
// gets a "did you mean".
const suggestDistance = 2

// guardCommands makes every command that only groups subcommands (the
// root, query, cache, …) fail with a usage error on an argument that names
// none of them, suggesting the nearest, instead of printing its help and
// exiting 0. Without arguments such a command prints its help.
func guardCommands(cmd *cobra.Command) {
	if cmd.HasSubCommands() {
		cmd.SuggestionsMinimumDistance = suggestDistance
		if cmd.Run == nil && cmd.RunE == nil {
			cmd.Args = cobra.ArbitraryArgs
			cmd.RunE = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return c.Help()
				}
				return unknownSubcommand(c, args[0])
			}
		}
	}
	for _, sub := range cmd.Commands() {
		guardCommands(sub)
	}
}

// unknownSubcommand is the usage error for a word that names no
// subcommand of c.
func unknownSubcommand(c *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, c.CommandPath())
	if s := c.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
		if len(s) > 1 {
			msg = strings.TrimSuffix(msg, "?") + fmt.Sprintf(" (or %s)?", quoteAll(s[1:]))
		}
	}
	return exitf(exitUsage, "%s\nRun '%s --help' for usage.", msg, c.CommandPath())
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// commandName is a command's path without the program name: "query
// resolve".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// exactArgs accepts exactly the arguments named (as the usage line writes
// them: NAME, REF), and says which is missing.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return exitf(exitUsage, "%s needs %s", commandName(c), strings.Join(names[len(args):], " "))
		case len(args) > len(names):
			return exitf(exitUsage, "%s takes %s, not %d arguments (%s)", commandName(c), argList(names), len(args), strings.Join(quoted(args), " "))
		}
		return nil
	}
}

// minArgs accepts one or more arguments, the first named name.
func minArgs(name string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return exitf(exitUsage, "%s needs %s", commandName(c), name)
		}
		return nil
	}
}

// maxArgs accepts at most one argument, named name.
func maxArgs(name string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > 1 {
			return exitf(exitUsage, "%s takes at most one %s, not %d arguments (%s)", commandName(c), name, len(args), strings.Join(quoted(args), " "))
		}
		return nil
	}
}

// noArgs accepts no arguments.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return exitf(exitUsage, "%s takes no arguments, not %s", commandName(c), strings.Join(quoted(args), " "))
	}
	return nil
}

func argList(names []string) string {
	if len(names) == 1 {
		return "one " + names[0]
	}
	return strings.Join(names, " ")
}

func quoted(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprintf("%q", a)
	}
	return out
}
