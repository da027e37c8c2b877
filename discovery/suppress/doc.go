// Package suppress reads suppression comments and applies them to a
// file's diagnostics:
//
//	# amplidex: ignore[code, …]       on the line it ends
//	# amplidex: ignore-file[code, …]  anywhere in the file
//
// written as a YAML comment in the front matter of a Markdown document or
// as a TOML comment in pyproject.toml. Parse reads the comments of one
// file from its bytes; Files.Apply drops the diagnostics they cover and
// reports, as suppress/unused, each comment or code that covers nothing,
// is malformed or names no code. It is family-neutral: any file's
// diagnostics, whatever made them, go through the same Apply.
//
// It does not decide which diagnostics a file has, nor where they are
// composed for an answer; it imports discovery/diag and discovery/syntax
// only.
//
// # Concurrency
//
// Functions are pure; a Files value is not changed by Apply and may be
// read from any goroutine once built.
//
// # Caveats
//
//   - A comment names codes or areas ("schema/"), matched as
//     diag.MatchCode matches them; a renamed code is told its new name.
//   - Apply never modifies its argument; its result is sorted (diag.Sort).
//   - The suppress/unused diagnostics of one file are bounded like any
//     other area (diag.Limit).
package suppress
