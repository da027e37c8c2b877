// Package syntax reads the text of documents: it reads a file safely,
// maps byte offsets to positions, splits front matter from a Markdown
// body, parses YAML (a fast path for the common subset, go-yaml for the
// rest) and TOML (likewise, with the spans of keys the decoder does not
// give), decodes front matter into values that keep the author's order
// (Map, Float), finds @mentions, and parses versions and constraints.
//
// It knows no schema, no collection and no family of documents: which
// keys a document may hold is the schema package's, what a file means is
// the model's. It imports discovery/diag only, for Position and Range.
//
// # Concurrency
//
// Functions are pure, or read one file; values they return are not shared
// with the package afterwards. A LineIndex, a YAMLText and a decoded Map
// are never changed once built and may be read from any goroutine. A Nodes
// serves one parse at a time.
//
// # Caveats
//
//   - Every Position counts its character in UTF-16 code units, as the
//     Language Server Protocol does, and is computed in one pass over the
//     file (a line-start table and an incremental count), never by
//     rescanning a line per range.
//   - ReadFile reads only regular files, opened without blocking, and
//     never beyond its limit: a FIFO or a device where a document should
//     be is an error (ErrNotRegular), not a hang.
//   - Parsers never panic on any input and are bounded in time and
//     memory: front matter beyond MaxFrontMatter, MaxFrontMatterNodes or
//     MaxFrontMatterDepth, and TOML beyond MaxTOMLKeyParts or
//     MaxTOMLScanDepth, are refused with an error the caller reports.
//   - The fast paths give exactly what the full parsers give on the text
//     they read, and give up on anything else; fuzz tests hold the two to
//     the same results.
//   - Decoded front matter keeps what its author wrote: mappings are *Map,
//     in the author's key order, and a float is a Float (10.0 stays 10.0),
//     in JSON and YAML alike.
package syntax
