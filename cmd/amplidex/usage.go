package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/amplidex/amplidex/discovery/diag"
)

// suggestDistance is the edit distance within which a mistyped subcommand
// gets a "did you mean".
const suggestDistance = 2

// guardCommands makes every command that only groups subcommands (the
// root, query, cache, completion, …) fail with a usage error on an
// argument that names none of them, suggesting the nearest, instead of
// printing its help and exiting 0; without an argument, the usage error
// lists the subcommands.
func guardCommands(cmd *cobra.Command) {
	if cmd.HasSubCommands() {
		cmd.SuggestionsMinimumDistance = suggestDistance
		if cmd.Run == nil && cmd.RunE == nil {
			cmd.Args = cobra.ArbitraryArgs
			cmd.RunE = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return missingSubcommand(c)
				}
				return unknownSubcommand(c, args[0])
			}
		}
	}
	for _, sub := range cmd.Commands() {
		guardCommands(sub)
	}
}

// missingSubcommand is the usage error of a command that groups
// subcommands, run without one: it lists them.
func missingSubcommand(c *cobra.Command) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	name := commandName(c)
	if c == c.Root() {
		name = c.Name()
	}
	return exitf(exitUsage, "%s needs a subcommand: %s\nRun '%s --help' for usage.", name, strings.Join(names, ", "), c.CommandPath())
}

// flagError is the usage error of a flag that cannot be parsed: an
// unknown flag gets the nearest flag of the command as a suggestion.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var known []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			known = append(known, f.Name)
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(known, f.Name) {
			known = append(known, f.Name)
		}
	})
	name, _, _ = strings.Cut(name, "=")
	out := fmt.Sprintf("unknown flag --%s for %q", name, c.CommandPath())
	if near := diag.Suggest(name, known); near != "" {
		out += fmt.Sprintf("; did you mean --%s?", near)
	}
	return exitf(exitUsage, "%s\nRun '%s --help' for usage.", out, c.CommandPath())
}

// didYouMean is "; did you mean X?" naming the value of values that word
// most likely misspells, or "" when none is close.
func didYouMean(word string, values []string) string {
	if near := diag.Suggest(word, values); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

// oneOf is values as a sentence: "a, b or c".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// unknownSubcommand is the usage error for a word that names no
// subcommand of c.
func unknownSubcommand(c *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, c.CommandPath())
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	if near := diag.Suggest(word, names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	} else if s := c.SuggestionsFor(word); len(s) > 0 {
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

// noArgs accepts no arguments. A command that also has subcommands (daemon)
// takes an argument for a mistyped one.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 && c.HasSubCommands() {
		return unknownSubcommand(c, args[0])
	}
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
