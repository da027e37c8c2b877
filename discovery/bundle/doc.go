// Package bundle reads the files of Amplifier bundle repositories: bundles
// (Markdown with front matter, or YAML), agents (agents/*.md with meta:),
// modes, skills (skills/NAME/SKILL.md), recipes and context files.
//
// Parse turns one file's bytes into a File: its kind, the sections the
// runtime reads (a Bundle as amplifier-foundation's Bundle.from_dict reads
// it: includes, session, providers, tools, hooks, agents, context, spawn),
// the @mentions of its Markdown body, and the diagnostics of the file alone
// (syntax, strict schemas with did-you-mean hints, and the mistakes the
// runtime loads without a word: an include without a bundle: key, includes
// under bundle:, a leading @ in YAML, a module entry without module,
// tools: as a mapping, context: as a list, an agent without meta:,
// Markdown saved as .yaml). Values are decoded as the runtime's YAML
// loader (PyYAML's safe loader, YAML 1.1) decodes them, so that composed
// mount plans equal the runtime's.
//
// It does not read other files, resolve includes, compose bundles or find
// repositories: package compose does that over Files a caller provides, and
// package check walks a repository. Of the domain it imports only the
// vocabulary of diagnostics (discovery/diag: Diagnostic, Range, Suggest)
// and the positions and safe reads of discovery/syntax (LineIndex,
// ReadFile): it knows no collection.
//
// # Concurrency
//
// Parse is a pure function of its arguments. A File and everything it
// holds (Maps included) is never modified after Parse returns, so a cache
// may share it between goroutines.
//
// # Caveats
//
//   - Positions are 0-based lines and UTF-16 characters, as in every
//     Diagnostic of amplidex.
//   - Parsing is bounded: nesting deeper than MaxDepth, or aliases that
//     expand past a fixed number of values, stop the decoding with one
//     diagnostic; each file gets at most MaxDiagnostics diagnostics and one
//     that counts the rest.
//   - A timestamp stays the string its author wrote (the runtime reads a
//     date); an integer beyond 64 bits is a *big.Int.
//   - Classification is by path relative to the repository root, then by
//     content: a YAML or Markdown file with bundle: or includes: is a
//     bundle wherever it is.
package bundle
